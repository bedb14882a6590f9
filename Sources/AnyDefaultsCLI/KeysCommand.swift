import AnyDefaults
import ArgumentParser

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "List the keys, one per line, sorted.")

    @OptionGroup var store: StoreOptions
    @Option(help: "Only keys that start with this prefix.") var prefix: String?

    func run() throws {
        let keys = try reportingErrors { try store.open().keys() }
        let listed = keys.filter { prefix.map($0.hasPrefix) ?? true }.sorted()
        Console.write(listed.map { $0 + "\n" }.joined())
    }
}
