import AnyDefaultsCore

extension JSONFileProvider {
    /// Registers the `json:` scheme on `registry` (``ProviderRegistry/standard`` has it), with the
    /// options of Docs/Configuration.md: `recovery`, `locktimeout`, `watch`.
    ///
    /// ```swift
    /// let registry = ProviderRegistry()
    /// JSONFileProvider.register(in: registry)
    /// let store = try registry.makeProvider("json:/tmp/prefs.json?recovery=moveaside")
    /// ```
    public static func register(in registry: ProviderRegistry) {
        registry.register(
            scheme: "json", summary: "a human-readable, hand-editable JSON file", location: .path("PATH"),
            options: [
                StoreOption.recovery, StoreOption.lockTimeout(defaultSeconds: 10),
                StoreOption("watch", values: "on|off", summary: "report changes made by other processes (default on)"),
            ],
            identity: { JSONFileProvider.storeIdentity(path: $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            let options = try JSONFileProvider.Options(
                corruptionPolicy: configuration.recoveryOption() ? .moveAside : .fail,
                lockTimeout: configuration.lockTimeoutOption(defaultSeconds: 10),
                watchesExternalChanges: configuration.boolOption("watch", default: true))
            return try JSONFileProvider(path: configuration.location, options: options)
        }
    }
}
