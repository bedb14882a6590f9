import AnyDefaultsCore
import Synchronization
import Testing

/// Whether a cache entry agrees with the store: nothing cached, or exactly what the store holds.
private func agrees(_ cached: DefaultsValue??, _ stored: DefaultsValue?) -> Bool {
    guard let cached else { return true }
    return cached == stored
}

/// Something that changes key "k" (from `.int(1)` to `.int(2)` or to absent) while a read or a
/// write of it is paused inside the upstream.
enum Interference: String, CaseIterable, Sendable {
    case cacheWrite, cacheRemove, cacheBatch, cacheRemoveAll
    case invalidateKey, invalidateAll, externalChange, directUpstreamWrite

    /// Those that need no event from the upstream to be seen.
    static let throughTheCache: [Interference] = [.cacheWrite, .cacheRemove, .cacheBatch, .cacheRemoveAll, .invalidateKey, .invalidateAll]

    func perform<Cache: InspectableCache>(on cache: Cache, upstream: SpyProvider) throws {
        switch self {
        case .cacheWrite: try cache.setValue(.int(2), forKey: "k")
        case .cacheRemove: try cache.removeValue(forKey: "k")
        case .cacheBatch: try cache.apply([.set("k", .int(2)), .set("other", .int(0))])
        case .cacheRemoveAll: try cache.removeAll()
        case .invalidateKey:
            upstream.silentWrite("k", .int(2))
            cache.invalidate("k")
        case .invalidateAll:
            upstream.silentWrite("k", .int(2))
            cache.invalidateAll()
        case .externalChange: upstream.externalWrite("k", .int(2))
        case .directUpstreamWrite: try upstream.setValue(.int(2), forKey: "k")
        }
    }
}

enum WritePause: Sendable, CaseIterable {
    case beforeCommit, afterCommit
}

/// A read of "k" fetches `.int(1)` from the upstream and pauses; `interference` changes the key
/// and finishes; then the read finishes. Returns what the cache holds for "k" and what the store
/// holds.
private func readRacing<Cache: InspectableCache>(
    _ interference: Interference, reportsChanges: Bool = true, _ makeCache: (SpyProvider) -> Cache
) throws -> (cached: DefaultsValue??, stored: DefaultsValue?) {
    let spy = SpyProvider(["k": .int(1)], reportsChanges: reportsChanges)
    let cache = makeCache(spy)
    let fetched = Signal()
    let resume = Signal()
    let armed = Mutex(true)
    spy.onRead { key, _ in
        guard key == "k", armed.withLock({ armed in defer { armed = false }; return armed }) else { return }
        fetched.fire()
        resume.wait()
    }
    let reader = startThread { _ = try? cache.value(forKey: "k") }
    #expect(fetched.wait())
    try interference.perform(on: cache, upstream: spy)
    resume.fire()
    reader.wait()
    return (cache.cachedEntry(forKey: "k"), spy.stored("k"))
}

/// A write of `.int(1)` to "k" pauses inside the upstream, after committing or before;
/// `interference` changes the key and finishes; then the write finishes.
private func writeRacing<Cache: InspectableCache>(
    _ interference: Interference, pausing: WritePause, reportsChanges: Bool = true,
    _ makeCache: (SpyProvider) -> Cache
) throws -> (cached: DefaultsValue??, stored: DefaultsValue?) {
    let spy = SpyProvider(reportsChanges: reportsChanges)
    let cache = makeCache(spy)
    let paused = Signal()
    let resume = Signal()
    let hook: SpyProvider.CommitHook = { changes in
        guard changes == [.set("k", .int(1))] else { return }
        paused.fire()
        resume.wait()
    }
    switch pausing {
    case .afterCommit: spy.onCommit(hook)
    case .beforeCommit: spy.beforeCommit(hook)
    }
    let writer = startThread { try? cache.setValue(.int(1), forKey: "k") }
    #expect(paused.wait())
    try interference.perform(on: cache, upstream: spy)
    resume.fire()
    writer.wait()
    return (cache.cachedEntry(forKey: "k"), spy.stored("k"))
}

@Suite(.serialized) struct CachingCoherenceTests {
    // MARK: Chosen interleavings, made to happen with pauses inside the upstream

    @Test(arguments: Interference.allCases)
    func readThatOverlapsAChangeCachesNothingStale(_ interference: Interference) throws {
        let (cached, stored) = try readRacing(interference) { CachingProvider($0) }
        #expect(agrees(cached, stored), "cached \(String(describing: cached)), stored \(String(describing: stored))")
    }

    /// Coherence does not lean on the upstream's events: an upstream that reports nothing gets
    /// the same guarantee for changes made through the cache.
    @Test(arguments: Interference.throughTheCache)
    func readThatOverlapsAChangeCachesNothingStaleWithoutEvents(_ interference: Interference) throws {
        let (cached, stored) = try readRacing(interference, reportsChanges: false) { CachingProvider($0) }
        #expect(agrees(cached, stored), "cached \(String(describing: cached)), stored \(String(describing: stored))")
    }

    /// The same interleavings leave the naive cache stale: the tests above would catch it.
    @Test(arguments: [Interference.cacheWrite, .cacheBatch, .invalidateKey])
    func naiveCacheGoesStaleWhenAReadOverlapsAChange(_ interference: Interference) throws {
        let (cached, stored) = try readRacing(interference) { NaiveCache($0) }
        #expect(cached == .some(.int(1)))
        #expect(stored == .int(2))
    }

    @Test(arguments: Interference.allCases, WritePause.allCases)
    func writeThatOverlapsAChangeCachesNothingStale(_ interference: Interference, pausing: WritePause) throws {
        let (cached, stored) = try writeRacing(interference, pausing: pausing) { CachingProvider($0) }
        #expect(agrees(cached, stored), "cached \(String(describing: cached)), stored \(String(describing: stored))")
    }

    @Test(arguments: Interference.throughTheCache, WritePause.allCases)
    func writeThatOverlapsAChangeCachesNothingStaleWithoutEvents(_ interference: Interference, pausing: WritePause) throws {
        let (cached, stored) = try writeRacing(interference, pausing: pausing, reportsChanges: false) { CachingProvider($0) }
        #expect(agrees(cached, stored), "cached \(String(describing: cached)), stored \(String(describing: stored))")
    }

    /// Two writes land in the upstream in one order and update the naive cache in the other.
    @Test func naiveCacheGoesStaleWhenWritesFinishOutOfOrder() throws {
        let (cached, stored) = try writeRacing(.cacheWrite, pausing: .afterCommit) { NaiveCache($0) }
        #expect(cached == .some(.int(1)))
        #expect(stored == .int(2))
    }

    /// A read while a write is in flight may return the old value, but must not cache it.
    @Test func readDuringAnUncommittedWriteDoesNotCacheTheOldValue() throws {
        let spy = SpyProvider(["k": .int(1)])
        let cache = spy.cached()
        let entered = Signal()
        let resume = Signal()
        spy.beforeCommit { changes in
            guard changes == [.set("k", .int(2))] else { return }
            entered.fire()
            resume.wait()
        }
        let writer = startThread { try? cache.setValue(.int(2), forKey: "k") }
        #expect(entered.wait())
        #expect(try cache.value(forKey: "k") == .int(1))
        #expect(cache.cachedEntry(forKey: "k") == nil)
        resume.fire()
        writer.wait()
        #expect(cache.cachedEntry(forKey: "k") == .some(.int(2)))
        #expect(try cache.value(forKey: "k") == .int(2))
    }

    /// A change of another key reported while a write is in flight (here, a write made on the
    /// upstream directly, from inside the first write) is that key's, not the write's: the cache
    /// forgets the key it names. (The cache finds the record of the write in flight without a
    /// lookup only for an event of that write's key.)
    @Test func aChangeOfAnotherKeyDuringAWriteIsForgottenForThatKey() throws {
        let spy = SpyProvider(["a": .int(1), "b": .int(1)])
        let cache = spy.cached()
        #expect(try cache.value(forKey: "b") == .int(1))
        #expect(cache.cachedEntry(forKey: "b") == .some(.int(1)))
        spy.beforeCommit { changes in
            guard changes == [.set("a", .int(2))] else { return }
            try? spy.setValue(.int(5), forKey: "b")
        }
        try cache.setValue(.int(2), forKey: "a")
        #expect(cache.cachedEntry(forKey: "b") == nil)
        #expect(try cache.value(forKey: "b") == .int(5))
        #expect(try cache.value(forKey: "a") == .int(2))
    }

    // MARK: Random interleavings

    /// Many threads read, write, remove, batch and invalidate a few keys through the cache of an
    /// upstream that pauses inside every call, in short bursts that start together. After each
    /// burst, with every thread done, it compares each cached value with a fresh read of the
    /// store. Returns how many bursts left a stale value cached.
    private func stress<Cache: InspectableCache>(
        _ cache: Cache, upstream spy: SpyProvider, bursts: Int, meddling: Bool = false
    ) -> Int {
        let keys = ["a", "b", "c"]
        let threads = 8
        var staleBursts = 0
        for _ in 0..<bursts {
            runOnThreads(threads + (meddling ? 1 : 0)) { thread in
                for _ in 0..<8 {
                    let key = keys[Int.random(in: 0..<keys.count)]
                    let other = keys[Int.random(in: 0..<keys.count)]
                    let value = DefaultsValue.int(Int64.random(in: 0..<4))
                    if thread == threads {
                        // Changes made behind the cache, reported by the upstream's events.
                        if Bool.random() {
                            spy.externalWrite(key, Bool.random() ? value : nil)
                        } else {
                            try? spy.setValue(value, forKey: key)
                        }
                        continue
                    }
                    switch Int.random(in: 0..<20) {
                    case 0..<10: _ = try? cache.value(forKey: key)
                    case 10..<15: try? cache.setValue(value, forKey: key)
                    case 15..<17: try? cache.removeValue(forKey: key)
                    case 17..<19: try? cache.apply([.set(key, value), .set(other, .int(Int64.random(in: 0..<4)))])
                    default: cache.invalidate(key)
                    }
                }
            }
            if keys.contains(where: { !agrees(cache.cachedEntry(forKey: $0), spy.stored($0)) }) {
                staleBursts += 1
                // Start the next burst from a coherent cache, so that each stale burst is new.
                for key in keys { cache.invalidate(key) }
            }
        }
        return staleBursts
    }

    /// The stress test is able to catch a stale cache: the naive one goes stale.
    @Test func stressCatchesTheNaiveCache() {
        let spy = SpyProvider(jitter: true)
        let stale = stress(NaiveCache(spy), upstream: spy, bursts: 150)
        #expect(stale > 0, "the naive cache never went stale; the stress test proves nothing")
    }

    @Test(arguments: [true, false])
    func stressLeavesNothingStale(upstreamReportsChanges: Bool) throws {
        let spy = SpyProvider(jitter: true, reportsChanges: upstreamReportsChanges)
        let cache = spy.cached()
        #expect(stress(cache, upstream: spy, bursts: 150) == 0)
        #expect(cache.statistics.hits > 0)
        #expect(cache.statistics.skippedWrites > 0)
        for key in ["a", "b", "c"] {
            #expect(try cache.value(forKey: key) == spy.stored(key))
        }
    }

    @Test func stressWithChangesBehindTheCacheLeavesNothingStale() {
        let spy = SpyProvider(jitter: true)
        #expect(stress(spy.cached(), upstream: spy, bursts: 100, meddling: true) == 0)
    }
}
