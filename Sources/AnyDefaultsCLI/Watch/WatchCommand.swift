import AnyDefaults
import ArgumentParser
import Dispatch
import Foundation

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print one line per change, from this or any other process.",
        discussion: """
            Each change prints as KEY<TAB>JSON (the new value as one line of exact JSON) or \
            KEY<TAB>(removed), written out at once; a key prints escaped as `keys` prints it. Runs until interrupted (Ctrl-C exits with \
            status 0) or, with --count, until N changes were printed. Changes made by this and \
            other processes show on every persistent backend (json:, sqlite:, lmdb:, postgres:, \
            and userdefaults: on Linux). Where a store reports no changes of other processes \
            (json:?watch=off, userdefaults: on Apple platforms or where its directory cannot be \
            watched) a note on standard error \
            says so and watch reads the store four times a second instead, printing what changed \
            between two reads. memory: lives in one process only: nothing from elsewhere shows. \
            If the store's directory or data file is removed or replaced while watch runs, it \
            prints the old store's keys as removed, then follows the store at that path once it \
            exists (its contents, then its changes). The store must exist when watch starts: \
            watch never creates one (status 66, "no such store").
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "Only these keys (default: every key).") var keys: [String] = []
    @Option(help: "Stop after this many changes.") var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
    }

    func run() async throws {
        let (configuration, provider) = try reportingErrors { try store.openExisting(cached: true) }
        // Every printed line is already written: Ctrl-C is a normal way to stop.
        Interrupts.exit(on: SIGINT, with: 0)
        announce(provider, configuration)
        // A store whose files are removed or replaced meanwhile is followed by its provider,
        // which reports the old keys removed and then the store at the path.
        var printer = ChangePrinter(wanted: Set(keys), count: count)
        printer.known = try reportingErrors { try provider.allValues() }
        let capabilities = provider.capabilities
        if capabilities.contains(.persistent), !capabilities.contains(.externalChanges) {
            do {
                for try await event in ChangePoller(provider: provider).changes() {
                    if try printer.show([event]) { break }
                }
            } catch let error as DefaultsError {
                throw reported(error)
            }
        } else {
            for await event in provider.changes() {
                if try printer.show([event]) { break }
            }
        }
        withExtendedLifetime(provider) {}
    }

    private func announce(_ provider: any DefaultsProvider, _ configuration: StoreConfiguration) {
        let capabilities = provider.capabilities
        if !capabilities.contains(.externalChanges) {
            let instead = capabilities.contains(.persistent)
                ? "watching by reading the store four times a second instead"
                : "only changes made by this process would show"
            Console.error("changes from other processes are not reported by this backend (\(configuration.scheme):); \(instead).")
        }
        if Console.standardErrorIsTerminal {
            Console.note("Watching \(keys.isEmpty ? "every key" : keys.joined(separator: ", ")) in \(configuration); Ctrl-C to stop.")
        }
    }
}
