import AnyDefaultsCore
import Configuration

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension StoreConfiguration {
    /// Reads the store configuration from swift-configuration, so that a server configures its
    /// settings store like the rest of its settings.
    ///
    /// Reads `store` (a store string), or else `scheme`, `location` and `cache`, from `config`;
    /// returns `nil` when neither `store` nor `scheme` is set. Scope the reader to your own prefix:
    ///
    /// ```swift
    /// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), fileProvider])
    /// // ANYDEFAULTS_STORE=sqlite:/var/lib/app/defaults.sqlite, or {"anydefaults": {"store": ...}}
    /// if let configuration = try StoreConfiguration(reading: config.scoped(to: "anydefaults")) {
    ///     let store = try ProviderRegistry.standard.makeProvider(configuration)
    /// }
    /// ```
    public init?(reading config: ConfigReader) throws(DefaultsError) {
        if let store = config.string(forKey: "store") {
            self = try StoreConfiguration(parsing: store)
            return
        }
        guard let scheme = config.string(forKey: "scheme") else { return nil }
        let location = config.string(forKey: "location") ?? ""
        var cache = true
        if let text = config.string(forKey: "cache") {
            cache = try Self.parseOnOff(text, option: "cache")
        }
        self.init(scheme: scheme, location: location, cache: cache)
    }
}
