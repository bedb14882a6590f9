import AnyDefaults
import ArgumentParser
import Foundation
import Synchronization

/// Scratch storage for `verify`, `bench` and `tour`: a fresh temporary directory for file-based
/// stores and unique names for named ones (UserDefaults suites), all removed by ``remove()`` —
/// also when the command is interrupted (SIGINT, SIGTERM, SIGHUP; see ``Interrupts``) or its
/// output fails (a closed pipe). The user's own stores are never touched.
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
        Interrupts.register(self)
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
        // Foundation's copy in memory first: removing the file makes Foundation synchronize the
        // suite, which would write back the changes it holds (the bench baseline's).
        UserDefaults.standard.removePersistentDomain(forName: name)
        try? UserDefaultsProvider.removeSuite(named: name)
    }

    /// Removes the directory and everything tracked. Calling it again removes them again (nothing
    /// is left to remove unless something recreated it).
    func remove() {
        removeStorage()
        // Last: an interrupted process waits for this before it ends.
        Interrupts.unregister(self)
    }

    /// Removes the directory and everything tracked, keeping the list, so that a second pass
    /// removes again what a write still under way recreated (``Interrupts``, on a second signal).
    func removeStorage() {
        let (directories, suites) = extras.withLock { $0 }
        for suite in suites { Self.removeSuite(suite) }
        for tracked in directories + [directory] { try? FileManager.default.removeItem(at: tracked) }
    }

    /// Whether anything of the area exists (again): its directories, or a tracked suite's file.
    var hasStorage: Bool {
        let (directories, suites) = extras.withLock { $0 }
        let suiteFiles = suites.compactMap { try? UserDefaultsProvider.propertyListURL(forSuite: $0) }
        return (directories + [directory] + suiteFiles).contains { FileManager.default.fileExists(atPath: $0.path) }
    }
}

extension ScratchArea {
    /// Throws the exit status for the signal if the command was interrupted, so that it stops
    /// and removes its scratch storage as it unwinds. Long loops call it often; it is one atomic
    /// load.
    static func checkInterruption() throws {
        let number = Interrupts.interruption.load(ordering: .relaxed)
        if number != 0 { throw ExitCode(128 + number) }
    }
}
