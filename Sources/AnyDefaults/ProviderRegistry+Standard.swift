import AnyDefaultsCore
import AnyDefaultsMemory

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
        return registry
    }()

    /// Registers every built-in backend's scheme on this registry.
    public func registerBuiltInBackends() {
        register(scheme: "memory", summary: "in memory, gone when the process ends (tests, previews)", location: .none) { _ in
            InMemoryProvider()
        }
    }
}
