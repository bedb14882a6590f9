import AnyDefaults
import ArgumentParser

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy every key of the store to another store, in one atomic batch there.",
        discussion: """
            The destination receives every key and value of the source (--store) in one batch: \
            all or nothing on a backend with atomic batches. Its other keys are kept. With --move, \
            the copied keys are then removed from the source, only once the destination's batch \
            succeeded, and only those that still hold the value copied, compared and removed in \
            one transaction: a key another process changed meanwhile keeps its new value in the \
            source. Source and destination must be different stores, decided by their files \
            (however the paths are spelled: links, bind mounts, relative paths), and --move needs \
            a destination that persists (not memory:).
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
            func sameStore() -> CommandFailure {
                CommandFailure(
                    ExitStatus.usage,
                    "the source and the destination are the same store (\(source) and \(destination) reach the same files)")
            }
            // Decided by the files, before either store is opened: opening one SQLite file by two
            // names (a hard link) would give it two journals.
            if source.namesSameStorage(as: destination) { throw sameStore() }
            if let one = try ProviderRegistry.standard.storeIdentity(of: source),
                let other = try ProviderRegistry.standard.storeIdentity(of: destination), one.overlaps(other)
            {
                throw sameStore()
            }
            // The source is read: one that does not exist is "no such store" (66), not a copy of
            // nothing that would look like a successful move (and create an empty source).
            let sourceProvider = try store.openExisting().provider
            let destinationProvider = try StoreOptions.openForCommand(destination)
            // The library's copy and move: the same-store check by the opened stores' identities,
            // a move refused into a store that does not persist, the compare-and-remove.
            let show = { (stage: DefaultsStoreTransfer.Stage) in
                switch stage {
                case .reading: progress.show("reading \(source)")
                case .writing(let count): progress.show("writing \(count) keys to \(destination) in one batch")
                case .removing(let count): progress.show("removing \(count) keys from \(source)")
                }
            }
            let transfer = try move ? sourceProvider.moveAll(to: destinationProvider, progress: show) : sourceProvider.copyAll(to: destinationProvider, progress: show)
            if !transfer.keptInSource.isEmpty {
                Console.error("\(transfer.keptInSource.count) key(s) changed in the source during the move; they were copied, and kept in the source with their new values.")
            }
            let values = transfer.copied
            progress.finish("\(move ? "Moved" : "Copied") \(values.count) keys from \(source) to \(destination).")
        }
    }
}
