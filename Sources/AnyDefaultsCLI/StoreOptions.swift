import AnyDefaults
import ArgumentParser
import Foundation

/// The `--store` option every command shares, and how it resolves.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store to use, as a store string (see the discussion).", valueName: "store"))
    var store: String?

    /// `--store`, else `ANYDEFAULTS_STORE`, else the SQLite store in the user's data directory.
    func configuration() throws(DefaultsError) -> StoreConfiguration {
        if let configuration = try StoreConfiguration.resolve(explicit: store) { return configuration }
        return StoreConfiguration(scheme: "sqlite", location: Self.defaultStorePath)
    }

    /// `$XDG_DATA_HOME/anydefaults/defaults.sqlite`, or under `~/.local/share` when unset.
    static var defaultStorePath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "~/.local/share"
        return base + "/anydefaults/defaults.sqlite"
    }

    /// Opens the store, creating the default store's directory when it is the one used.
    func open() throws(DefaultsError) -> any DefaultsProvider {
        try Self.open(configuration())
    }

    static func open(_ configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider {
        if configuration.location == defaultStorePath {
            let directory = (configuration.resolvedPath as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try ProviderRegistry.standard.makeProvider(configuration)
    }
}
