import AnyDefaults
import Foundation

/// Scratch storage for `verify`, `bench` and `tour`: a fresh temporary directory for file-based
/// stores and unique names for named ones (UserDefaults suites), all removed by ``remove()``.
/// The user's own stores are never touched.
final class ScratchArea {
    /// The temporary directory.
    let directory: URL
    private var suites: [String] = []

    /// Creates `$TMPDIR/anydefaults-PURPOSE-UUID`.
    init(purpose: String) throws(CommandFailure) {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anydefaults-\(purpose)-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.file(directory.path, "create the scratch directory", error, status: ExitStatus.cannotCreate)
        }
    }

    /// `configuration` moved into this area: a path becomes `NAME.SCHEME` in the directory, a name
    /// becomes a unique one, remembered for ``remove()``. Scheme and options are kept.
    func place(_ configuration: StoreConfiguration, name: String) throws(DefaultsError) -> StoreConfiguration {
        let placed = try Self.place(configuration, in: directory, name: name, uniqueName: "anydefaults-\(name)-\(UUID().uuidString)")
        if placed.scheme == "userdefaults" { suites.append(placed.location) }
        return placed
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
        }
        return try ProviderRegistry.standard.validate(placed)
    }

    /// Removes a scratch UserDefaults suite (its file, on Linux).
    static func removeSuite(_ name: String) {
        try? UserDefaultsProvider.removeSuite(named: name)
    }

    /// Removes the directory and every suite placed here.
    func remove() {
        for suite in suites { Self.removeSuite(suite) }
        suites.removeAll()
        try? FileManager.default.removeItem(at: directory)
    }
}
