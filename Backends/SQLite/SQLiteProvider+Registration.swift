import AnyDefaultsCore

extension SQLiteProvider {
    /// Registers the `sqlite:` scheme on `registry` (``ProviderRegistry/standard`` has it), with
    /// the options of Docs/Configuration.md: `durability` (`normal` or `full`; `synced` is `full`),
    /// `locktimeout` (`busytimeout` is its older spelling).
    ///
    /// ```swift
    /// let registry = ProviderRegistry()
    /// SQLiteProvider.register(in: registry)
    /// let store = try registry.makeProvider("sqlite:/tmp/prefs.sqlite?durability=full")
    /// ```
    public static func register(in registry: ProviderRegistry) {
        registry.register(
            scheme: "sqlite", summary: "an SQLite database file (WAL), for many keys and many processes", location: .path("PATH"),
            options: [
                StoreOption(
                    "durability", values: "normal|full",
                    summary: "normal (default): survives a crash of the process, a power loss may undo the last commits; full: a sync per commit, survives a power loss"),
                StoreOption.lockTimeout(defaultSeconds: 5).aliased("busytimeout"),
            ],
            identity: { SQLiteProvider.storeIdentity(path: $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            try SQLiteProvider(
                path: configuration.location,
                options: SQLiteProvider.Options(
                    durability: configuration.option(
                        "durability", choices: ["normal": .normal, "full": .full, "synced": .full], default: .normal),
                    lockTimeout: configuration.lockTimeoutOption(defaultSeconds: 5)))
        }
    }
}
