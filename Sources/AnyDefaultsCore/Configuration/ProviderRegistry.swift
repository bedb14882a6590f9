import Synchronization

/// Maps a store string's scheme to the backend that opens it.
///
/// The `AnyDefaults` umbrella module offers `ProviderRegistry.standard` with every built-in
/// backend registered. Register your own provider to open it by configuration too:
///
/// ```swift
/// ProviderRegistry.standard.register(
///     scheme: "redis", summary: "a Redis hash", location: .required("HOST:PORT/HASH"),
///     options: [StoreOption("timeout", values: "seconds", summary: "connect timeout")]
/// ) { configuration in
///     try RedisProvider(address: configuration.location, timeout: configuration.intOption("timeout", in: 1...60, default: 5))
/// }
/// let store = try ProviderRegistry.standard.makeProvider("redis:localhost:6379/settings")
/// ```
public final class ProviderRegistry: Sendable {
    /// Opens a provider for a configuration whose scheme, location and option names were checked.
    public typealias Factory = @Sendable (StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider
    /// The storage a checked configuration names, without opening it (see ``DefaultsStoreIdentity``).
    public typealias Identity = @Sendable (StoreConfiguration) -> DefaultsStoreIdentity?

    /// What a scheme's location is.
    public enum Location: Sendable, Hashable {
        /// Nothing follows the colon (`memory:`).
        case none
        /// A file or directory path, resolved like a shell resolves it (`~`, relative paths).
        case path(String)
        /// A name or path that may be left out (`userdefaults:` or `userdefaults:com.example.app`).
        case optional(String)
        /// A name that must be given.
        case required(String)
        /// A server, `//USER@HOST:PORT/NAME` (see ``StoreConfiguration/authority``), or else a
        /// local path (a Unix socket's directory, say), resolved like ``path(_:)``. The hint is
        /// shown in help and errors.
        case server(String)
    }

    /// A registered backend.
    public struct Entry: Sendable {
        public var scheme: String
        public var summary: String
        public var location: Location
        public var options: [StoreOption]
        let factory: Factory
        let identity: Identity?

        /// Whether the store is on a server (a ``Location/server(_:)`` location), so that no
        /// scratch store of it can be made without one.
        public var needsServer: Bool {
            if case .server = location { true } else { false }
        }

        /// How the scheme is written, for help and error messages: `sqlite:PATH[?durability=normal|full]`.
        public var usage: String {
            var text = "\(scheme):"
            switch location {
            case .none: break
            case .path(let hint), .required(let hint), .server(let hint): text += hint
            case .optional(let hint): text += "[\(hint)]"
            }
            let names = (options.map(\.description) + genericOptions).joined(separator: "&")
            return text + "[?\(names)]"
        }

        /// Whether `journal=on` can put a ``JournaledProvider`` in front of the store: one kept in
        /// a file (a ``Location/path(_:)`` location).
        public var acceptsJournal: Bool {
            if case .path = location { true } else { false }
        }

        /// The options every store of the scheme takes besides its own.
        var genericOptions: [String] {
            acceptsJournal ? ["cache=on|off", "journal=on|off", "journalsize=bytes"] : ["cache=on|off"]
        }
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Wraps a provider in a cache for `cache=on`; set by the module that provides the cache.
    private let cacheWrapper = Mutex<(@Sendable (any DefaultsProvider) -> any DefaultsProvider)?>(nil)

    /// Creates an empty registry.
    public init() {}

    /// Registers (or replaces) the backend for `scheme`. `identity`, if given, names the storage
    /// a configuration reaches without opening it (``storeIdentity(of:)``), so that two
    /// configurations on one store are recognized before either is opened.
    public func register(
        scheme: String, summary: String, location: Location, options: [StoreOption] = [],
        identity: Identity? = nil, factory: @escaping Factory
    ) {
        let entry = Entry(
            scheme: scheme.lowercased(), summary: summary, location: location, options: options, factory: factory,
            identity: identity)
        entries.withLock { $0[entry.scheme] = entry }
    }

    /// Sets how `cache=on` wraps a provider.
    public func setCacheWrapper(_ wrap: @escaping @Sendable (any DefaultsProvider) -> any DefaultsProvider) {
        cacheWrapper.withLock { $0 = wrap }
    }

    /// Every registered backend, sorted by scheme.
    public var registered: [Entry] {
        entries.withLock { Array($0.values) }.sorted { $0.scheme < $1.scheme }
    }

    /// Opens the store that `text` names.
    public func makeProvider(_ text: String) throws(DefaultsError) -> any DefaultsProvider {
        try makeProvider(StoreConfiguration(parsing: text))
    }

    /// Opens the store that `configuration` names, after checking its scheme, location and option
    /// names; wraps it in a cache when `configuration.cache` is set and a cache wrapper is known.
    public func makeProvider(_ configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider {
        let checked = try validate(configuration)
        let entry = try self.entry(for: checked.scheme)
        var provider = try entry.factory(checked)
        if let journal = checked.options[Self.journalOption], try StoreConfiguration.parseOnOff(journal, option: Self.journalOption) {
            let capacity = try checked.intOption(Self.journalSizeOption, in: 4096...(1 << 30), default: JournalOptions().capacity)
            provider = try Self.journaled(provider, options: JournalOptions(capacity: capacity))
        }
        guard checked.cache, let wrap = cacheWrapper.withLock({ $0 }) else { return provider }
        return wrap(provider)
    }

    /// Checks `configuration` against its backend's declaration and returns it with a path
    /// location resolved to an absolute path.
    public func validate(_ configuration: StoreConfiguration) throws(DefaultsError) -> StoreConfiguration {
        let entry = try self.entry(for: configuration.scheme)
        var configuration = configuration
        // C calls end a path at its first NUL: "a.json\0b" would quietly name "a.json".
        if configuration.location.utf8.contains(0) {
            throw StoreConfiguration.error("\(entry.scheme): the location holds a NUL character, which no path or name can hold.")
        }
        if configuration.authority != nil {
            guard case .server = entry.location else {
                throw StoreConfiguration.error(
                    "\(entry.scheme)://… names a host; \(entry.scheme): stores are local. Write \(entry.scheme):/absolute/path or \(entry.scheme):relative/path.")
            }
        }
        switch entry.location {
        case .none where !configuration.location.isEmpty:
            throw StoreConfiguration.error("\(entry.scheme): takes no location, but \"\(configuration.location)\" was given. Write \(entry.usage).")
        case .path(let hint), .required(let hint):
            if configuration.location.isEmpty {
                throw StoreConfiguration.error("\(entry.scheme): needs a \(hint). Write \(entry.usage).")
            }
            if case .path = entry.location { configuration.location = configuration.resolvedPath }
        case .server(let hint) where configuration.authority == nil:
            if configuration.location.isEmpty {
                throw StoreConfiguration.error("\(entry.scheme): needs a server (\(hint)). Write \(entry.usage).")
            }
            configuration.location = configuration.resolvedPath
        default:
            break
        }
        for option in entry.options {
            for alias in option.aliases {
                guard let value = configuration.options.removeValue(forKey: alias) else { continue }
                if configuration.options[option.name] != nil {
                    throw StoreConfiguration.error(
                        "\(entry.scheme): has both \(option.name)= and \(alias)=, two spellings of one option; keep \(option.name)=.")
                }
                configuration.options[option.name] = value
            }
        }
        let journal = try configuration.options[Self.journalOption].map { (value) throws(DefaultsError) -> Bool in
            guard entry.acceptsJournal else {
                throw StoreConfiguration.error(
                    "\(entry.scheme): has no journal: journal=on goes in front of a store kept in a file (json:, sqlite:, lmdb:).")
            }
            return try StoreConfiguration.parseOnOff(value, option: Self.journalOption)
        }
        if configuration.options[Self.journalSizeOption] != nil, entry.acceptsJournal, journal != true {
            throw StoreConfiguration.error("\(entry.scheme): journalsize= sizes the journal of journal=on, which is not given.")
        }
        let accepted = Set(entry.options.map(\.name) + (entry.acceptsJournal ? [Self.journalOption, Self.journalSizeOption] : []))
        if let unknown = configuration.options.keys.sorted().first(where: { !accepted.contains($0) }) {
            let list = (entry.options.map(\.description) + entry.genericOptions).joined(separator: ", ")
            throw StoreConfiguration.error("\(entry.scheme): has no option \"\(unknown)\". Accepted: \(list).")
        }
        return configuration
    }

    /// The storage `configuration` reaches, without opening it: `nil` when its backend registered
    /// no identity (``register(scheme:summary:location:options:identity:factory:)``) or keeps
    /// nothing that another store could reach (`memory:`).
    ///
    /// ```swift
    /// let a = try registry.storeIdentity(of: StoreConfiguration(parsing: "sqlite:/data/prefs.sqlite"))
    /// let b = try registry.storeIdentity(of: StoreConfiguration(parsing: "sqlite:/srv/link-to-prefs.sqlite"))
    /// a!.overlaps(b!)   // true
    /// ```
    public func storeIdentity(of configuration: StoreConfiguration) throws(DefaultsError) -> DefaultsStoreIdentity? {
        let checked = try validate(configuration)
        return try entry(for: checked.scheme).identity?(checked)
    }

    /// The option that puts a ``JournaledProvider`` in front of a store kept in a file.
    static let journalOption = "journal"
    /// The journal's capacity in bytes (``JournalOptions/capacity``), with `journal=on`.
    static let journalSizeOption = "journalsize"

    private static func journaled<Provider: DefaultsProvider>(_ provider: Provider, options: JournalOptions) throws(DefaultsError)
        -> any DefaultsProvider
    {
        try provider.journaled(options: options)
    }

    private func entry(for scheme: String) throws(DefaultsError) -> Entry {
        let all = entries.withLock { $0 }
        guard let entry = all[scheme] else {
            let known = all.values.sorted { $0.scheme < $1.scheme }.map(\.usage).joined(separator: "; ")
            let guess = Self.suggestion(for: scheme, among: Array(all.keys)).map { " Did you mean \($0):?" } ?? ""
            throw StoreConfiguration.error("Unknown scheme \"\(scheme):\".\(guess) Known: \(known.isEmpty ? "none registered" : known).")
        }
        return entry
    }
}
