import AnyDefaults
import ArgumentParser

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete keys, every key under a prefix, or everything, in one atomic batch.",
        discussion: "Deleting a key that is not there is no error.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The keys to delete.") var keys: [String] = []
    @Option(help: "Delete every key that starts with this prefix.") var prefix: String?
    @Flag(help: "Delete every key.") var all = false

    func validate() throws {
        let modes = [!keys.isEmpty, prefix != nil, all].filter { $0 }.count
        guard modes == 1 else {
            throw ValidationError("Give KEY..., or --prefix P, or --all (exactly one of them).")
        }
        if prefix == "" {
            throw ValidationError("--prefix needs a prefix: an empty one would delete every key; use --all for that.")
        }
    }

    func run() throws {
        try reportingErrors {
            let provider = try store.open()
            if all {
                try provider.removeAll()
            } else if let prefix {
                try provider.apply(provider.keys(withPrefix: prefix).map { .remove($0) })
            } else {
                try provider.apply(keys.map { .remove($0) })
            }
        }
    }
}
