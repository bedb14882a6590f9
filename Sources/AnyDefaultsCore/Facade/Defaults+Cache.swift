// The cache in front of the provider, passed through.

/// What ``Defaults`` needs of the cache in front of its provider. A class, so that a reference
/// to it is copied with a retain rather than through the existential's value witnesses.
protocol CacheControl: AnyObject, Sendable {
    var readPath: CacheReadPath { get }
    func readSlot(forKey key: String, observationKey: ObservationTracker.KeyPathType) -> CacheReadSlot
    func setValue(_ value: DefaultsValue, through slot: CacheReadSlot) throws(DefaultsError)
    func observeDirectly(_ observer: CacheDirectObserver) -> DefaultsObservation
    func value(through slot: CacheReadSlot) throws(DefaultsError) -> DefaultsValue?
    var statistics: CacheStatistics { get }
    func resetStatistics()
    func invalidate(_ key: String)
    func invalidateAll()
}

extension CachingProvider: CacheControl {}

extension Defaults {
    /// Whether a ``CachingProvider`` stands in front of the provider.
    public var isCached: Bool { shared.cache != nil }

    /// What the cache has done (hits, misses, writes, skipped writes, hit rate); `nil` when
    /// the store is not cached.
    ///
    /// ```swift
    /// if let statistics = defaults.statistics { print(statistics.hitRate) }
    /// ```
    public var statistics: CacheStatistics? { shared.cache?.statistics }

    /// Sets the cache's counters back to zero.
    public func resetStatistics() {
        shared.cache?.resetStatistics()
    }

    /// Forgets what the cache holds for `key`, so that the next read asks the backend. Use it
    /// when the store was changed in a way its backend does not report.
    public func invalidateCache(forKey key: some DefaultsKeyName) {
        let fullKey = fullKey(key.defaultsKeyName)
        shared.cache?.invalidate(fullKey)
        shared.decoded.remove(forKey: fullKey)
    }

    /// Forgets everything the cache holds (for every scope).
    public func invalidateCache() {
        shared.cache?.invalidateAll()
        shared.decoded.removeAll(withPrefix: "")
    }
}
