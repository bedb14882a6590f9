import AnyDefaults
import ArgumentParser

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy every key of the store to another store, in one atomic batch there.",
        discussion: """
            The destination receives every key and value of the source (--store) in one batch: \
            all or nothing on a backend with atomic batches. Its other keys are kept. With --move, \
            the copied keys are then removed from the source, in one batch, and only once the \
            destination's batch succeeded (a key changed in the source meanwhile is kept there). \
            Source and destination must be different stores.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("The destination store string.", valueName: "store")) var to: String
    @Flag(help: "Remove the keys from the source once the destination holds them.") var move = false

    func run() throws {
        let progress = ProgressLine("migrate")
        defer { progress.clear() }
        try reportingErrors {
            let source = try store.configuration()
            let destination = try ProviderRegistry.standard.validate(StoreConfiguration(parsing: to))
            if source.namesSameStorage(as: destination) {
                throw CommandFailure(ExitStatus.usage, "the source and the destination are the same store (\(source))")
            }
            progress.show("reading \(source)")
            let sourceProvider = try StoreOptions.openForCommand(source)
            let values = try sourceProvider.allValues()
            progress.show("writing \(values.count) keys to \(destination) in one batch")
            try StoreOptions.openForCommand(destination).apply(values.sorted { $0.key < $1.key }.map { .set($0.key, $0.value) })
            var left = 0
            if move {
                progress.show("removing \(values.count) keys from \(source)")
                // A key another process changed meanwhile keeps its new value in the source.
                let current = try sourceProvider.allValues()
                let unchanged = values.keys.filter { current[$0] == values[$0] }.sorted()
                left = values.count - unchanged.count
                try sourceProvider.apply(unchanged.map { .remove($0) })
                if left > 0 {
                    Console.error("\(left) key(s) changed in the source during the move; they were copied, and kept in the source with their new values.")
                }
            }
            progress.finish("\(move ? "Moved" : "Copied") \(values.count) keys from \(source) to \(destination).")
        }
    }
}
