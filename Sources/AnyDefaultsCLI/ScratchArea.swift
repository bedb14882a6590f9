import AnyDefaults
import ArgumentParser
import Dispatch
import Foundation
import ArgumentParser
import Synchronization

/// Scratch storage for `verify`, `bench` and `tour`: a fresh temporary directory for file-based
/// stores and unique names for named ones (UserDefaults suites), all removed by ``remove()`` —
/// also when the command is interrupted (SIGINT, SIGTERM, SIGHUP) or its output is closed
/// (SIGPIPE). The user's own stores are never touched.
final class ScratchArea: Sendable {
    /// The temporary directory.
    let directory: URL
    /// What to remove besides the directory.
    private let extras = Mutex<(directories: [URL], suites: [String])>(([], []))

    /// Creates `$TMPDIR/anydefaults-PURPOSE-UUID`.
    init(purpose: String) throws(CommandFailure) {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anydefaults-\(purpose)-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.file(directory.path, "create the scratch directory", error, status: ExitStatus.cannotCreate)
        }
        ScratchCleanup.register(self)
    }

    /// `configuration` moved into this area: a path becomes `NAME.SCHEME` in the directory, a name
    /// becomes a unique one, remembered for ``remove()``. Scheme and options are kept.
    func place(_ configuration: StoreConfiguration, name: String) throws(DefaultsError) -> StoreConfiguration {
        let placed = try Self.place(configuration, in: directory, name: name, uniqueName: "anydefaults-\(name)-\(UUID().uuidString)")
        if placed.scheme == "userdefaults" { track(suite: placed.location) }
        return placed
    }

    /// Also removes `directory` (made by someone else, such as the conformance suite) and the
    /// UserDefaults suite `suite` when this area is removed or the command interrupted.
    func track(directory: URL? = nil, suite: String? = nil) {
        extras.withLock { extras in
            if let directory { extras.directories.append(directory) }
            if let suite { extras.suites.append(suite) }
        }
    }

    /// `configuration` with its location replaced by scratch storage: a path `NAME.SCHEME` in
    /// `directory`, or `uniqueName` for schemes whose location is a name.
    static func place(
        _ configuration: StoreConfiguration, in directory: URL, name: String, uniqueName: String
    ) throws(DefaultsError) -> StoreConfiguration {
        guard let entry = ProviderRegistry.standard.registered.first(where: { $0.scheme == configuration.scheme }) else {
            // Not registered: validation throws the error that lists the known schemes.
            return try ProviderRegistry.standard.validate(configuration)
        }
        var placed = configuration
        switch entry.location {
        case .none: placed.location = ""
        case .path: placed.location = directory.appendingPathComponent("\(name).\(configuration.scheme)").path
        case .optional, .required: placed.location = uniqueName
        case .server(let hint):
            throw DefaultsError(
                .invalidConfiguration, "\(configuration.scheme): needs a server; name one (\(hint)).", backend: "Configuration")
        }
        return try ProviderRegistry.standard.validate(placed)
    }

    /// Removes a scratch UserDefaults suite (its file, on Linux).
    static func removeSuite(_ name: String) {
        try? UserDefaultsProvider.removeSuite(named: name)
    }

    /// Removes the directory and everything tracked. Calling it again does nothing more.
    func remove() {
        let (directories, suites) = extras.withLock { extras in
            defer { extras = ([], []) }
            return extras
        }
        for suite in suites { Self.removeSuite(suite) }
        for tracked in directories + [directory] { try? FileManager.default.removeItem(at: tracked) }
        // Last: an interrupted process waits for this before it ends.
        ScratchCleanup.unregister(self)
    }
}

/// Removes the live scratch areas when a signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE) ends the
/// process.
///
/// The command itself stops at its next ``ScratchArea/checkInterruption()`` and removes its areas
/// as it unwinds, so that nothing it writes afterwards recreates what was removed. If it has not
/// done so within ten seconds (a conformance group cannot be stopped half-way), or a second signal
/// comes, the handler removes them and ends the process. Either way the status is 128 + the
/// signal's number, as a shell reports it.
private enum ScratchCleanup {
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGPIPE]
    private static let state = Mutex<(areas: [ObjectIdentifier: ScratchArea], sources: [any DispatchSourceSignal])>(([:], []))
    static let interruption = Atomic<Int32>(0)

    static func register(_ area: ScratchArea) {
        state.withLock { state in
            state.areas[ObjectIdentifier(area)] = area
            guard state.sources.isEmpty else { return }
            for number in signals {
                // Ignored as a plain signal, so that only the source below receives it.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { interrupt(by: number) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    static func unregister(_ area: ScratchArea) {
        state.withLock { _ = $0.areas.removeValue(forKey: ObjectIdentifier(area)) }
    }

    private static func interrupt(by number: Int32) {
        if interruption.compareExchange(expected: 0, desired: number, ordering: .relaxed).exchanged {
            let start = ContinuousClock.now
            var noted = false
            while ContinuousClock.now - start < .seconds(10), !state.withLock({ $0.areas.isEmpty }) {
                if !noted, ContinuousClock.now - start > .milliseconds(500) {
                    noted = true
                    Console.error("interrupted: removing the scratch storage once the current step ends (interrupt again to stop at once).")
                }
                usleep(10_000)
            }
        }
        let areas = state.withLock { Array($0.areas.values) }
        for area in areas { area.remove() }
        // `_exit`, not `raise`: this runs on a dispatch thread, which blocks signals.
        _exit(128 + number)
    }
}

extension ScratchArea {
    /// Throws the exit status for the signal if the command was interrupted, so that it stops
    /// and removes its scratch storage as it unwinds. Long loops call it often; it is one atomic
    /// load.
    static func checkInterruption() throws {
        let number = ScratchCleanup.interruption.load(ordering: .relaxed)
        if number != 0 { throw ExitCode(128 + number) }
    }
}
