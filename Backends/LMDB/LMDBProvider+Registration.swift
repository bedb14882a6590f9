import AnyDefaultsCore

extension LMDBProvider {
    /// Registers the `lmdb:` scheme on `registry` (``ProviderRegistry/standard`` has it where the
    /// `LMDB` package trait is on), with the options of Docs/Configuration.md: `mapsize`,
    /// `maxsize`, `durability` (`full`, `nosync` or `mapped`; `synced` is `full`), `locktimeout`.
    ///
    /// ```swift
    /// let registry = ProviderRegistry()
    /// LMDBProvider.register(in: registry)
    /// let store = try registry.makeProvider("lmdb:/tmp/prefs.lmdb?durability=nosync")
    /// ```
    public static func register(in registry: ProviderRegistry) {
        registry.register(
            scheme: "lmdb", summary: "an LMDB environment (a directory): fastest reads, many processes",
            location: .path("DIR"),
            options: [
                StoreOption("mapsize", values: "size", summary: "initial map size, e.g. 64MiB (default 4MiB); grows by itself"),
                StoreOption("maxsize", values: "size", summary: "the most the map may grow to, e.g. 8GiB (default 1GiB)"),
                StoreOption(
                    "durability", values: "full|nosync|mapped",
                    summary: "full (default): a sync per commit, survives a power loss; nosync: survives a crash of the process only; mapped: as nosync, writing the map in place (fastest; a power loss can damage the store)"),
                StoreOption.lockTimeout(defaultSeconds: 5),
            ],
            identity: { LMDBProvider.storeIdentity(path: $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            let defaults = LMDBProvider.Options()
            let initial = try configuration.byteCountOption("mapsize", default: defaults.initialMapSize)
            let maximum = try configuration.byteCountOption("maxsize", default: defaults.maximumMapSize)
            if let given = configuration.options["mapsize"], let limit = configuration.options["maxsize"], initial > maximum {
                throw DefaultsError(
                    .invalidConfiguration,
                    "The option mapsize=\(given) is larger than maxsize=\(limit): the map starts at mapsize and never grows past maxsize.",
                    backend: LMDBProvider.backend)
            }
            let options = try LMDBProvider.Options(
                initialMapSize: initial,
                maximumMapSize: maximum,
                durability: configuration.option(
                    "durability", choices: ["full": .synced, "synced": .synced, "nosync": .noSync, "mapped": .mapped], default: .synced),
                lockTimeout: configuration.lockTimeoutOption(defaultSeconds: 5))
            return try LMDBProvider(path: configuration.location, options: options)
        }
    }
}
