import AnyDefaultsCore

extension UserDefaultsProvider {
    /// Registers the `userdefaults:` scheme on `registry` (``ProviderRegistry/standard`` has it),
    /// with the options of Docs/Configuration.md: `recovery` (`recover=on|off` is its older
    /// spelling), `locktimeout`.
    ///
    /// ```swift
    /// let registry = ProviderRegistry()
    /// UserDefaultsProvider.register(in: registry)
    /// let store = try registry.makeProvider("userdefaults:com.example.app")
    /// ```
    public static func register(in registry: ProviderRegistry) {
        registry.register(
            scheme: "userdefaults", summary: "Foundation's user defaults: the standard suite, or a named one",
            location: .optional("SUITE"),
            options: [StoreOption.recovery.aliased("recover"), StoreOption.lockTimeout(defaultSeconds: 10)],
            identity: { UserDefaultsProvider.storeIdentity(forSuite: $0.location.isEmpty ? nil : $0.location) }
        ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            try UserDefaultsProvider(
                suiteName: configuration.location.isEmpty ? nil : configuration.location,
                options: UserDefaultsProvider.Options(
                    recoverCorruptedFile: configuration.recoveryOption(),
                    lockTimeout: configuration.lockTimeoutOption(defaultSeconds: 10)))
        }
    }
}
