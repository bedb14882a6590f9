import AnyDefaults
import ArgumentParser

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "List the keys, one per line, sorted.")

    @OptionGroup var store: StoreOptions
    @Option(help: "Only keys that start with this prefix.") var prefix: String?

    func run() throws {
        let keys = try reportingErrors { try store.open().keys() }
        for key in keys.sorted() where prefix.map(key.hasPrefix) ?? true {
            print(key)
        }
    }
}
