extension DefaultsProvider {
    /// This provider behind a read-through, write-through cache; see ``CachingProvider``.
    ///
    /// ```swift
    /// let store = MemoryProvider().cached()
    /// ```
    public func cached() -> CachingProvider<Self> {
        CachingProvider(self)
    }

    /// This provider behind a cache, loaded with every stored key at once when `preload` is
    /// true; see ``CachingProvider/preload()``.
    ///
    /// ```swift
    /// let store = try JSONFileProvider(path: path).cached(preload: true)
    /// ```
    public func cached(preload: Bool) throws(DefaultsError) -> CachingProvider<Self> {
        let cache = CachingProvider(self)
        if preload { try cache.preload() }
        return cache
    }
}
