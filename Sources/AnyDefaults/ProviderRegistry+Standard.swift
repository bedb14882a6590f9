import AnyDefaultsCore
import AnyDefaultsJSONFile
import AnyDefaultsMemory
import AnyDefaultsSQLite
import AnyDefaultsUserDefaults

#if canImport(AnyDefaultsLMDB)
import AnyDefaultsLMDB
#endif
#if canImport(AnyDefaultsPostgreSQL)
import AnyDefaultsPostgreSQL
#endif

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

    /// Registers every built-in backend's scheme on this registry: each backend registers its own
    /// (`SQLiteProvider.register(in:)`, ...). `lmdb:` and `postgres:` are there when this build
    /// has them (the `LMDB` and `PostgreSQL` package traits).
    public func registerBuiltInBackends() {
        MemoryProvider.register(in: self)
        JSONFileProvider.register(in: self)
        UserDefaultsProvider.register(in: self)
        SQLiteProvider.register(in: self)
        #if canImport(AnyDefaultsLMDB)
        LMDBProvider.register(in: self)
        #endif
        #if canImport(AnyDefaultsPostgreSQL)
        PostgreSQLProvider.register(in: self)
        #endif
    }
}

/// Wraps a provider of any concrete type in a ``CachingProvider`` (opening the existential).
private func cached<Provider: DefaultsProvider>(_ provider: Provider) -> any DefaultsProvider {
    provider.cached()
}
