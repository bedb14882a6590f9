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
            status 0) or, with --count, until N changes were printed. Changes made by other \
            processes are reported by backends with the externalChanges capability (json:, and \
            userdefaults: on Linux); on other persistent backends (sqlite:, lmdb:) a note on \
            standard error says so and watch reads the store four times a second instead, \
            printing what changed between two reads. If the store's directory or data file is \
            removed or replaced while watch runs, it prints the old store's keys as removed, \
            then follows the store at that path once it exists (its contents, then its changes).
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "Only these keys (default: every key).") var keys: [String] = []
    @Option(help: "Stop after this many changes.") var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
    }

    func run() async throws {
        let configuration: StoreConfiguration
        var opened: (any DefaultsProvider)?
        do {
            // In a scope of its own, so that `opened` holds the only reference (see below).
            let opening = try reportingErrors { try store.openExisting(cached: true) }
            (configuration, opened) = (opening.configuration, opening.provider)
        }
        // Every printed line is already written: Ctrl-C is a normal way to stop.
        Interrupts.exit(on: SIGINT, with: 0)
        var printer = ChangePrinter(wanted: Set(keys), count: count)
        if let provider = opened {
            announce(provider, configuration)
            printer.known = try allValues(of: provider)
        }
        var moved: WatchedLocation?
        while true {
            if let current = opened {
                let location = WatchedLocation(configuration)
                guard try await follow(current, &printer, until: location) == .storeMoved, let location else { return }
                // The directory or the data file under the path is not the one opened: whatever
                // was in it is gone; the store at the path, once there, is opened and followed
                // instead, after this one is released (an instance still open on the old files
                // could be shared with the new one).
                Console.error("the store's files were removed or replaced (\(location.dataFile)); following the store now at that path.")
                if try printer.show(removalOf: printer.known.keys.sorted()) { return }
                (opened, moved) = (nil, location)
            } else {
                while !(moved?.exists ?? true) { try await Task.sleep(for: .milliseconds(100)) }
                let next = try reportingErrors { try StoreOptions.open(configuration) }
                if try printer.show(printer.differences(to: allValues(of: next))) { return }
                opened = next
            }
        }
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

    private enum Ending { case countReached, storeMoved, streamEnded }

    /// Prints `provider`'s changes until --count is reached or the store at `location` is no
    /// longer the one opened (checked four times a second).
    private func follow(_ provider: any DefaultsProvider, _ printer: inout ChangePrinter, until location: WatchedLocation?) async throws -> Ending {
        let (signals, continuation) = AsyncStream.makeStream(of: Result<DefaultsChangeEvent?, DefaultsError>.self)
        let capabilities = provider.capabilities
        let forwarding = Task {
            if capabilities.contains(.persistent), !capabilities.contains(.externalChanges) {
                do {
                    for try await event in ChangePoller(provider: provider).changes() { continuation.yield(.success(event)) }
                } catch let error as DefaultsError {
                    continuation.yield(.failure(error))
                } catch {}
            } else {
                for await event in provider.changes() { continuation.yield(.success(event)) }
            }
            continuation.finish()
        }
        let checking = Task {
            guard let location else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                if location.hasMoved {
                    continuation.yield(.success(nil))
                    return
                }
            }
        }
        var ending = Ending.streamEnded
        do {
            loop: for await signal in signals {
                switch signal {
                case .success(let event?):
                    if try printer.show([event]) {
                        ending = .countReached
                        break loop
                    }
                case .success(nil):
                    ending = .storeMoved
                    break loop
                case .failure(let error):
                    throw reported(error)
                }
            }
        } catch {
            forwarding.cancel()
            checking.cancel()
            throw error
        }
        // Both end before the provider is let go (see `run`).
        forwarding.cancel()
        checking.cancel()
        await forwarding.value
        await checking.value
        return ending
    }

    private func allValues(of provider: any DefaultsProvider) throws -> [String: DefaultsValue] {
        try reportingErrors { try provider.allValues() }
    }
}
