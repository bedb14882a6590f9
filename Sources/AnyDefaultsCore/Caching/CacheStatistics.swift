/// How a ``CachingProvider`` has been doing since it was created or its statistics were last reset.
///
/// ```swift
/// let store = MemoryProvider().cached()
/// _ = try store.value(forKey: "a")   // miss: read from the upstream
/// _ = try store.value(forKey: "a")   // hit
/// print(store.statistics.hitRate)    // 0.5
/// ```
public struct CacheStatistics: Sendable, Hashable {
    /// Reads answered from the cache, absence included.
    public var hits = 0
    /// Reads that went to the upstream provider.
    public var misses = 0
    /// Changes passed on to the upstream provider: one per key written or removed (a batch counts
    /// each change it passes on), and one per ``CachingProvider/removeAll()``.
    public var writes = 0
    /// Changes not passed on because the cache already held the value written (or knew the key
    /// was absent, for a removal).
    public var skippedWrites = 0

    /// Creates statistics with every counter at zero.
    public init() {}

    /// The share of reads answered from the cache, from 0 to 1; 0 when nothing was read.
    public var hitRate: Double {
        let reads = hits + misses
        return reads == 0 ? 0 : Double(hits) / Double(reads)
    }
}

extension CacheStatistics: CustomStringConvertible {
    public var description: String {
        let percent = (hitRate * 1000).rounded() / 10
        return "hits: \(hits), misses: \(misses) (hit rate \(percent)%), writes: \(writes), skipped writes: \(skippedWrites)"
    }
}
