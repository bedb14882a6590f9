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

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store where Defaults.standard of the app NAME keeps its settings: ANYDEFAULTS_STORE or the configuration file when set (as they would be for the app), else its UserDefaults suite (NAME: the app's bundle identifier, or its process name when it has none).",
            valueName: "name"))
    var app: String?

    func validate() throws {
        if store != nil, app != nil { throw ValidationError("Give --store or --app, not both.") }
        if let app, app.isEmpty { throw ValidationError("--app needs the app's name.") }
    }

    /// `--store`, else `ANYDEFAULTS_STORE` (else the file `ANYDEFAULTS_CONFIG` names), else the
    /// SQLite store in the user's data directory; checked against its backend, with a path
    /// location made absolute.
    /// A configuration error names where the configuration came from (`ANYDEFAULTS_STORE`, the
    /// configuration file), so that a user who did not type `--store` knows what to fix.
    func configuration() throws(DefaultsError) -> StoreConfiguration {
        do {
            let configuration: StoreConfiguration
            if let app {
                // Found as the app's Defaults.standard finds it.
                configuration = try Defaults.standardConfiguration(forApp: app)
            } else {
                configuration =
                    try StoreConfiguration.resolve(explicit: store)
                    ?? StoreConfiguration(scheme: "sqlite", location: Self.defaultStorePath)
            }
            return try ProviderRegistry.standard.validate(configuration)
        } catch {
            throw source.attributing(error)
        }
    }

    /// Where the store comes from, as ``StoreConfiguration/resolve(explicit:file:environment:)``
    /// picks it.
    var source: StoreSource {
        if store != nil { return .option }
        let environment = ProcessInfo.processInfo.environment
        if let text = environment[StoreConfiguration.storeVariable], !text.trimmingCharacters(in: .whitespaces).isEmpty {
            return .environment
        }
        if let path = environment[StoreConfiguration.fileVariable], !path.isEmpty { return .file(path) }
        if let app { return .app(app) }
        return .defaultStore
    }

    /// Opens the store for a command that only reads it (`read`, `read-type`, `keys`, `export`,
    /// `watch`; `cached` for `watch`, which observes),
    /// which must never create it: a store whose data file does not exist is a
    /// ``CommandFailure`` "no such store" (66), and nothing is created, not even the default
    /// store's directory. A store kept elsewhere than in a file (`memory:`, a server) is opened.
    /// Checked before opening, so a store removed in between is created again by the open: a
    /// backend opens its file with create rights, as every writer must.
    func openExisting(cached: Bool = false) throws -> (configuration: StoreConfiguration, provider: any DefaultsProvider) {
        let configuration = try configuration()
        if let dataFile = try ProviderRegistry.standard.storeIdentity(of: configuration)?.files.first,
            !FileManager.default.fileExists(atPath: dataFile),
            // A SQLite log left without its database may hold commits: opening it gives the
            // backend's error naming the log (74), which says more than "no such store", and
            // creates nothing.
            !(configuration.scheme == "sqlite"
                && ["-wal", "-journal"].contains { FileManager.default.fileExists(atPath: dataFile + $0) })
        {
            try probe(configuration)
            throw CommandFailure(ExitStatus.noInput, "no such store: \(configuration)\(source.naming)")
        }
        let provider: any DefaultsProvider
        do {
            provider = try cached ? Self.open(configuration) : Self.openForCommand(configuration)
        } catch {
            throw source.attributing(error)
        }
        return (configuration, provider)
    }

    /// Reports a bad option value or suite name of a store that does not exist, as opening it
    /// would: the backend checks them when it opens, so `configuration` is opened on scratch
    /// storage (never the user's), removed at once.
    private func probe(_ configuration: StoreConfiguration) throws {
        let scratch = try ScratchArea(purpose: "probe")
        defer { scratch.remove() }
        do {
            if configuration.scheme == "userdefaults", !configuration.location.isEmpty {
                _ = try UserDefaultsProvider.propertyListURL(forSuite: configuration.location)
            }
            _ = try Self.openForCommand(scratch.place(configuration, name: "probe"))
        } catch {
            throw source.attributing(error)
        }
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
        try openForCommand(configuration())
    }

    /// Opens `configuration` (this option's store) as ``openForCommand(_:)-swift.type.method``
    /// does, a configuration error naming its source (an option value the backend refuses).
    func openForCommand(_ configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider {
        do {
            return try Self.openForCommand(configuration)
        } catch {
            throw source.attributing(error)
        }
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

/// Where a command's store configuration came from.
enum StoreSource: Equatable {
    /// `--store`.
    case option
    /// `ANYDEFAULTS_STORE`.
    case environment
    /// The JSON file at this path, named by `ANYDEFAULTS_CONFIG`.
    case file(String)
    /// `--app NAME`, with neither variable set: the app's standard UserDefaults suite.
    case app(String)
    /// None of them: the SQLite store in the user's data directory.
    case defaultStore

    /// How a message names the source after the store: ` (named by ANYDEFAULTS_STORE)`.
    var naming: String {
        switch self {
        case .option: ""
        case .environment: " (named by \(StoreConfiguration.storeVariable))"
        case .file(let path): " (named by the configuration file \(path), from \(StoreConfiguration.fileVariable))"
        case .app(let name): " (the standard store of the app \(name))"
        case .defaultStore: " (the default store; `anydefaults write` creates it)"
        }
    }

    /// `error` with its source named when the source caused it (a configuration error).
    func attributing(_ error: DefaultsError) -> DefaultsError {
        guard error.code == .invalidConfiguration else { return error }
        var error = error
        switch self {
        case .environment where !error.message.hasPrefix("In \(StoreConfiguration.storeVariable)"):
            error.message = "In \(StoreConfiguration.storeVariable): " + error.message
        case .file(let path):
            error.message = "In the configuration file \(path) (\(StoreConfiguration.fileVariable)): " + error.message
            if error.path == path { error.path = nil }
        default:
            break
        }
        return error
    }
}
