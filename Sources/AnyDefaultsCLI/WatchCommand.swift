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
            The store must exist: watch never creates one (status 66, "no such store").
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
        let wanted = Set(keys)
        var printed = 0
        /// Prints `event` if it is wanted, and says whether --count is reached.
        func show(_ event: DefaultsChangeEvent) throws(CommandFailure) -> Bool {
            guard wanted.isEmpty || wanted.contains(event.key) else { return false }
            let shown = event.newValue.map { ExactJSON.string(from: $0, layout: .oneLine) } ?? "(removed)"
            try Console.write("\(Console.listed(event.key))\t\(shown)\n")
            printed += 1
            return count.map { printed >= $0 } ?? false
        }
        if capabilities.contains(.persistent), !capabilities.contains(.externalChanges) {
            do {
                for try await event in ChangePoller(provider: provider).changes() {
                    if try show(event) { break }
                }
            } catch let error as DefaultsError {
                throw reported(error)
            }
        } else {
            for await event in provider.changes() {
                if try show(event) { break }
            }
        }
        withExtendedLifetime(provider) {}
    }
}
