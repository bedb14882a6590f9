import AnyDefaultsCore

extension MemoryProvider {
    /// Registers the `memory:` scheme on `registry` (``ProviderRegistry/standard`` has it).
    ///
    /// ```swift
    /// let registry = ProviderRegistry()
    /// MemoryProvider.register(in: registry)
    /// let store = try registry.makeProvider("memory:")
    /// ```
    public static func register(in registry: ProviderRegistry) {
        registry.register(scheme: "memory", summary: "in memory, gone when the process ends (tests, previews)", location: .none) { _ in
            MemoryProvider()
        }
    }
}
