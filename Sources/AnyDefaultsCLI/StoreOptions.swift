import AnyDefaults
import ArgumentParser
import Foundation

/// The `--store` option every command shares, and how it resolves.
///
/// The root command declares it too, so it may come before the command
/// (`anydefaults --store memory: keys`) or after it (`anydefaults keys --store memory:`).
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store, as a store string such as json:~/prefs.json (default: $ANYDEFAULTS_STORE, else the SQLite store in the user's data directory).",
            valueName: "store"))
    var store: String?

    /// `--store`, else `ANYDEFAULTS_STORE` (else the file `ANYDEFAULTS_CONFIG` names), else the
    /// SQLite store in the user's data directory; checked against its backend, with a path
    /// location made absolute.
    func configuration() throws(DefaultsError) -> StoreConfiguration {
        let configuration =
            try StoreConfiguration.resolve(explicit: store)
            ?? StoreConfiguration(scheme: "sqlite", location: Self.defaultStorePath)
        return try ProviderRegistry.standard.validate(configuration)
    }

    /// `$XDG_DATA_HOME/anydefaults/defaults.sqlite`, or under `~/.local/share` when it is unset
    /// or not absolute (as the XDG base directory specification says).
    static var defaultStorePath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "~/.local/share"
        return StoreConfiguration(scheme: "sqlite", location: base + "/anydefaults/defaults.sqlite").resolvedPath
    }

    /// Opens the store for one command, without a cache (see ``openForCommand(_:)``).
    func open() throws(DefaultsError) -> any DefaultsProvider {
        try Self.openForCommand(configuration())
    }

    /// Opens a store for a command that reads or writes a few keys and exits: without the cache
    /// the configuration may ask for (`cache=on` is the default). A cache pays off over many
    /// reads in one long-lived process; here it would only observe the store, and observing a
    /// SQLite or LMDB store registers this process as a watcher, a write that a command such as
    /// `read` must not make.
    static func openForCommand(_ configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider {
        var configuration = configuration
        configuration.cache = false
        return try open(configuration)
    }

    /// Opens the store `configuration` names, creating the default store's directory (private
    /// to the user) when that is the store used.
    static func open(_ configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider {
        if configuration.scheme == "sqlite", configuration.resolvedPath == defaultStorePath {
            let directory = (defaultStorePath as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try ProviderRegistry.standard.makeProvider(configuration)
    }
}

extension StoreConfiguration {
    /// Whether two validated configurations name the same storage (whatever their options):
    /// the same scheme and location (a path after symbolic links are followed). Two `memory:`
    /// stores are never the same.
    func namesSameStorage(as other: StoreConfiguration) -> Bool {
        guard scheme == other.scheme, scheme != "memory" else { return false }
        func canonical(_ location: String) -> String {
            location.hasPrefix("/") ? URL(fileURLWithPath: location).resolvingSymlinksInPath().path : location
        }
        return canonical(location) == canonical(other.location)
    }
}
