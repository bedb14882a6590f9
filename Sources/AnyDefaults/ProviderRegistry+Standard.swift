import AnyDefaultsCore
import AnyDefaultsJSONFile
import AnyDefaultsLMDB
import AnyDefaultsMemory
import AnyDefaultsPostgreSQL
import AnyDefaultsSQLite
import AnyDefaultsUserDefaults

extension ProviderRegistry {
    /// The registry with every built-in backend: `memory:` and the others listed in
    /// Docs/Configuration.md. Register your own schemes on it to open them by configuration.
    ///
    /// ```swift
    /// let store = try ProviderRegistry.standard.makeProvider("memory:")
    /// ```
    public static let standard: ProviderRegistry = {
        let registry = ProviderRegistry()
        registry.registerBuiltInBackends()
        registry.setCacheWrapper { cached($0) }
        return registry
    }()

    /// Registers every built-in backend's scheme on this registry.
    public func registerBuiltInBackends() {
        register(scheme: "memory", summary: "in memory, gone when the process ends (tests, previews)", location: .none) { _ in
            InMemoryProvider()
        }
        register(
            scheme: "json", summary: "a human-readable, hand-editable JSON file", location: .path("PATH"),
            options: [
                StoreOption("recovery", values: "fail|moveaside", summary: "a bad file: throw (default), or keep it aside and start empty"),
                StoreOption("locktimeout", values: "seconds", summary: "how long a write waits for another process (default 10)"),
                StoreOption("watch", values: "on|off", summary: "report changes made by other processes (default on)"),
            ],
            identity: { JSONFileProvider.storeIdentity(path: $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            let options = try JSONFileProvider.Options(
                corruptionPolicy: configuration.option("recovery", choices: ["fail": .fail, "moveaside": .moveAside], default: .fail),
                lockTimeout: .seconds(configuration.intOption("locktimeout", in: 0...86_400, default: 10)),
                watchesExternalChanges: configuration.boolOption("watch", default: true))
            return try JSONFileProvider(path: configuration.location, options: options)
        }
        register(
            scheme: "userdefaults", summary: "Foundation's user defaults: the standard suite, or a named one",
            location: .optional("SUITE"),
            options: [
                StoreOption("recover", values: "on|off", summary: "move a damaged suite file aside and start empty (default off)"),
                StoreOption("locktimeout", values: "seconds", summary: "how long a write waits for another process (default 10)"),
            ],
            identity: { UserDefaultsProvider.storeIdentity(forSuite: $0.location.isEmpty ? nil : $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            try UserDefaultsProvider(
                suiteName: configuration.location.isEmpty ? nil : configuration.location,
                options: UserDefaultsProvider.Options(
                    recoverCorruptedFile: configuration.boolOption("recover", default: false),
                    lockTimeout: .seconds(configuration.intOption("locktimeout", in: 0...86_400, default: 10))))
        }
        register(
            scheme: "sqlite", summary: "an SQLite database file (WAL), for many keys and many processes",
            location: .path("PATH"),
            options: [
                StoreOption("durability", values: "normal|full", summary: "synchronous NORMAL (default: survives a crash) or FULL (also a power loss)"),
                StoreOption("busytimeout", values: "seconds", summary: "how long a write waits for another process (default 5)"),
            ],
            identity: { SQLiteProvider.storeIdentity(path: $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            try SQLiteProvider(
                path: configuration.location,
                durability: configuration.option("durability", choices: ["normal": .normal, "full": .full], default: .normal),
                busyTimeout: .seconds(configuration.intOption("busytimeout", in: 0...86_400, default: 5)))
        }
        register(
            scheme: "lmdb", summary: "an LMDB environment (a directory): fastest reads, many processes",
            location: .path("DIR"),
            options: [
                StoreOption("mapsize", values: "size", summary: "initial map size, e.g. 64MiB (default 4MiB); grows by itself"),
                StoreOption("maxsize", values: "size", summary: "the most the map may grow to, e.g. 8GiB (default 1GiB)"),
                StoreOption("durability", values: "synced|nosync", summary: "sync each commit (default), or survive only an application crash"),
                StoreOption("locktimeout", values: "seconds", summary: "how long a write waits for another process (default 5)"),
            ],
            identity: { LMDBProvider.storeIdentity(path: $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            let defaults = LMDBProvider.Options()
            let options = try LMDBProvider.Options(
                initialMapSize: configuration.byteCountOption("mapsize", default: defaults.initialMapSize),
                maximumMapSize: configuration.byteCountOption("maxsize", default: defaults.maximumMapSize),
                durability: configuration.option("durability", choices: ["synced": .synced, "nosync": .noSync], default: .synced),
                lockTimeout: .seconds(configuration.intOption("locktimeout", in: 0...86_400, default: 5)))
            return try LMDBProvider(path: configuration.location, options: options)
        }
        // libpq's two spellings, so that a DATABASE_URL can be pasted as it is.
        for scheme in ["postgres", "postgresql"] {
            register(
                scheme: scheme,
                summary: scheme == "postgres" ? "a PostgreSQL database, shared live by many processes and machines" : "the same as postgres:",
                location: .server("//USER@HOST[:PORT]/DATABASE or /SOCKET/DIR"), options: PostgreSQLProvider.storeOptions
            ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
                try PostgreSQLProvider(options: PostgreSQLProvider.Options(configuration))
            }
        }
    }
}

/// Wraps a provider of any concrete type in a ``CachingProvider`` (opening the existential).
private func cached<Provider: DefaultsProvider>(_ provider: Provider) -> any DefaultsProvider {
    provider.cached()
}
