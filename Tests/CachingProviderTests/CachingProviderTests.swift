import AnyDefaultsCore
import AnyDefaultsMemory
import Synchronization
import TestSupport
import Testing

@Suite struct CachingProviderReadTests {
    @Test func aMissReadsTheUpstreamOnceThenHits() throws {
        let spy = SpyProvider(["a": .string("x")])
        let cache = spy.cached()
        for _ in 0..<3 { #expect(try cache.value(forKey: "a") == .string("x")) }
        #expect(spy.counts.reads == 1)
        #expect(cache.statistics.misses == 1)
        #expect(cache.statistics.hits == 2)
    }

    @Test func absenceIsCached() throws {
        let spy = SpyProvider()
        let cache = spy.cached()
        #expect(try cache.value(forKey: "missing") == nil)
        #expect(try cache.value(forKey: "missing") == nil)
        #expect(spy.counts.reads == 1)
        #expect(cache.cachedEntry(forKey: "missing") == .some(nil))
    }

    /// The hit path does not normalize keys: it relies on String equality being canonical
    /// equivalence, while the upstream receives the key and canonicalizes it.
    @Test func canonicallyEquivalentKeysShareOneEntry() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let spy = SpyProvider()
        let cache = spy.cached()
        try cache.setValue(.int(1), forKey: decomposed)
        #expect(try cache.value(forKey: composed) == .int(1))
        #expect(spy.counts.reads == 0)
        #expect(try spy.keys() == [composed])
        try cache.setValue(.int(1), forKey: composed)
        #expect(spy.counts.writes == 1)
        #expect(cache.statistics.skippedWrites == 1)
        try cache.removeValue(forKey: composed)
        #expect(try cache.value(forKey: decomposed) == nil)
        #expect(try spy.keys().isEmpty)
    }

    /// A singleton decomposition: the ANGSTROM SIGN is canonically the letter Å.
    @Test func aSingletonDecompositionIsTheSameKey() throws {
        let spy = SpyProvider()
        let cache = spy.cached()
        try cache.setValue(.int(1), forKey: "\u{212B}")
        #expect(try cache.value(forKey: "\u{C5}") == .int(1))
        #expect(try cache.value(forKey: "A\u{30A}") == .int(1))
        #expect(spy.counts.reads == 0)
        #expect(try spy.keys() == ["\u{C5}"])
    }

    @Test func invalidKeysAreRejectedByTheUpstreamAndNothingIsCached() throws {
        let cache = MemoryProvider().cached()
        #expect(throws: DefaultsError.self) { try cache.value(forKey: "") }
        #expect(throws: DefaultsError.self) { try cache.setValue(.int(1), forKey: "") }
        #expect(throws: DefaultsError.self) { try cache.removeValue(forKey: "") }
        do {
            _ = try cache.value(forKey: "")
        } catch {
            #expect(error.code == .invalidKey)
            #expect(error.backend == "Memory")
        }
        #expect(cache.cachedKeyCount == 0)
    }

    @Test func aFailedReadCachesNothing() throws {
        let cache = SpyProvider().cached()
        #expect(throws: DefaultsError.self) { try cache.value(forKey: "") }
        #expect(cache.cachedEntry(forKey: "") == nil)
        #expect(cache.statistics.misses == 1)
    }

    @Test func preloadLoadsEveryKeyWithOneCall() throws {
        let spy = SpyProvider(["a": .int(1), "b": .bool(true)])
        let cache = try spy.cached(preload: true)
        #expect(spy.counts.allValues == 1)
        #expect(try cache.value(forKey: "a") == .int(1))
        #expect(try cache.value(forKey: "b") == .bool(true))
        #expect(spy.counts.reads == 0)
        #expect(cache.statistics.hits == 2)
        #expect(try spy.cached(preload: false).cachedKeyCount == 0)
    }

    @Test func keysAndAllValuesComeFromTheUpstream() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        spy.silentWrite("b", .int(2))
        #expect(try Set(cache.keys()) == ["a", "b"])
        #expect(try cache.allValues() == ["a": .int(1), "b": .int(2)])
        #expect(cache.capabilities == spy.capabilities)
    }
}

@Suite struct CachingProviderWriteTests {
    @Test func aWriteGoesToTheUpstreamAndIsThenReadFromTheCache() throws {
        let spy = SpyProvider()
        let cache = spy.cached()
        try cache.setValue(.double(-0.0), forKey: "a")
        #expect(spy.stored("a") == .double(-0.0))
        #expect(try cache.value(forKey: "a") == .double(-0.0))
        #expect(spy.counts.reads == 0)
        #expect(cache.statistics.writes == 1)
    }

    @Test func aWriteOfTheCachedValueIsSkipped() throws {
        let spy = SpyProvider(["a": .string("x")])
        let cache = spy.cached()
        let log = EventLog(cache)
        _ = try cache.value(forKey: "a")
        try cache.setValue(.string("x"), forKey: "a")
        #expect(spy.counts.writes == 0)
        #expect(cache.statistics.skippedWrites == 1)
        #expect(log.all.isEmpty)
    }

    /// Equality is bit-exact: `0.0` is not `-0.0`, and `.int(1)` is not `.double(1)`.
    @Test func aWriteOfAnEqualButDistinctValueIsNotSkipped() throws {
        let spy = SpyProvider(["d": .double(0.0), "i": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "d")
        _ = try cache.value(forKey: "i")
        try cache.setValue(.double(-0.0), forKey: "d")
        try cache.setValue(.double(1), forKey: "i")
        #expect(spy.counts.writes == 2)
        #expect(spy.stored("d") == .double(-0.0))
        #expect(spy.stored("i") == .double(1))
    }

    @Test func removingAKeyKnownAbsentIsSkipped() throws {
        let spy = SpyProvider()
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        try cache.removeValue(forKey: "a")
        #expect(spy.counts.writes == 0)
        #expect(cache.statistics.skippedWrites == 1)
    }

    @Test func aWriteOfAnUncachedKeyIsNotSkipped() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        try cache.setValue(.int(1), forKey: "a")
        #expect(spy.counts.writes == 1)
        #expect(cache.statistics.skippedWrites == 0)
    }

    @Test func aFailedWriteLeavesCacheAndStoreAgreeing() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        spy.failNextWrites(1)
        #expect(throws: DefaultsError.self) { try cache.setValue(.int(2), forKey: "a") }
        #expect(spy.stored("a") == .int(1))
        #expect(try cache.value(forKey: "a") == .int(1))
        #expect(cache.cachedEntry(forKey: "a") == .some(.int(1)))
    }

    @Test func aBatchSkipsRedundantChangesAndPassesTheRestAsOneBatch() throws {
        let spy = SpyProvider(["a": .int(1), "b": .int(2)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "b")
        _ = try cache.value(forKey: "gone")
        try cache.apply([.set("a", .int(1)), .set("b", .int(3)), .remove("gone"), .set("c", .int(4))])
        #expect(spy.counts.batches == [[.set("b", .int(3)), .set("c", .int(4))]])
        #expect(cache.statistics.skippedWrites == 2)
        #expect(cache.statistics.writes == 2)
        #expect(try cache.value(forKey: "b") == .int(3))
        #expect(try cache.value(forKey: "c") == .int(4))
        #expect(spy.counts.reads == 3)
    }

    @Test func aBatchOfOnlyRedundantChangesReachesNothing() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        try cache.apply([.set("a", .int(1))])
        try cache.apply([])
        #expect(spy.counts.writes == 0)
    }

    /// A change is redundant against what the key holds at its point in the batch, not against
    /// the cache before the batch.
    @Test func aBatchThatChangesAKeyTwiceKeepsItsOrder() throws {
        let spy = SpyProvider(["k": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "k")
        try cache.apply([.set("k", .int(2)), .set("k", .int(1)), .set("k", .int(1))])
        #expect(spy.counts.batches == [[.set("k", .int(2)), .set("k", .int(1))]])
        #expect(spy.stored("k") == .int(1))
        #expect(try cache.value(forKey: "k") == .int(1))
    }

    @Test func aFailedBatchLeavesCacheAndStoreAgreeing() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        spy.failNextWrites(1)
        #expect(throws: DefaultsError.self) { try cache.apply([.set("a", .int(2)), .set("b", .int(3))]) }
        #expect(try cache.value(forKey: "a") == .int(1))
        #expect(try cache.value(forKey: "b") == nil)
    }

    @Test func aBatchWithAnInvalidChangeIsRejectedWhole() throws {
        let memory = MemoryProvider(["a": .int(1)])
        let cache = memory.cached()
        _ = try cache.value(forKey: "a")
        var deep = DefaultsValue.int(0)
        for _ in 0...DefaultsValue.maximumNestingDepth { deep = .array([deep]) }
        let tooDeep = deep
        #expect(throws: DefaultsError.self) { try cache.apply([.set("a", .int(2)), .set("b", tooDeep)]) }
        #expect(throws: DefaultsError.self) { try cache.apply([.set("a", .int(1)), .set("", .int(2))]) }
        #expect(try memory.value(forKey: "a") == .int(1))
        #expect(try cache.value(forKey: "a") == .int(1))
        #expect(try memory.keys() == ["a"])
    }

    @Test func removeAllEmptiesStoreAndCache() throws {
        let spy = SpyProvider(["a": .int(1), "b": .int(2)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        try cache.removeAll()
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(try spy.keys().isEmpty)
    }
}

@Suite struct CachingProviderControlTests {
    @Test func statisticsCountAndReset() throws {
        let cache = MemoryProvider(["a": .int(1)]).cached()
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "b")
        try cache.setValue(.int(1), forKey: "a")
        try cache.setValue(.int(2), forKey: "a")
        var expected = CacheStatistics()
        expected.hits = 2
        expected.misses = 2
        expected.writes = 1
        expected.skippedWrites = 1
        #expect(cache.statistics == expected)
        #expect(cache.statistics.hitRate == 0.5)
        #expect(cache.statistics.description == "hits: 2, misses: 2 (hit rate 50.0%), writes: 1, skipped writes: 1")
        cache.resetStatistics()
        #expect(cache.statistics == CacheStatistics())
        #expect(cache.statistics.hitRate == 0)
    }

    @Test func invalidatingAKeyRereadsOnlyThatKey() throws {
        let spy = SpyProvider(["a": .int(1), "b": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "b")
        spy.silentWrite("a", .int(2))
        spy.silentWrite("b", .int(2))
        cache.invalidate("a")
        #expect(try cache.value(forKey: "a") == .int(2))
        #expect(try cache.value(forKey: "b") == .int(1))
        #expect(spy.counts.reads == 3)
    }

    @Test func invalidatingEverythingRereadsEverything() throws {
        let spy = SpyProvider(["a": .int(1), "b": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "b")
        spy.silentWrite("a", .int(2))
        cache.invalidateAll()
        #expect(cache.cachedKeyCount == 0)
        #expect(try cache.value(forKey: "a") == .int(2))
        #expect(try cache.value(forKey: "b") == .int(1))
        #expect(spy.counts.reads == 4)
    }

    @Test func releasingTheCacheStopsObservingTheUpstream() throws {
        let spy = SpyProvider()
        weak var released: CachingProvider<SpyProvider>?
        do {
            let cache = spy.cached()
            released = cache
            try cache.setValue(.int(1), forKey: "a")
        }
        #expect(released == nil)
        try spy.setValue(.int(2), forKey: "a")
    }

    /// The upstream's observer holds the cache's state strongly (see `CachingProvider.init`); it
    /// must still go with the cache, the published answers with it, while the upstream lives on.
    @Test func releasingTheCacheReleasesItsStateWhileTheUpstreamLives() throws {
        let upstream = MemoryProvider()
        weak var state: AnyObject?
        do {
            let cache = upstream.cached()
            state = cache.stateObject
            let defaults = Defaults(cache)
            defaults[.cacheReleaseCount] = 3
            #expect(defaults[.cacheReleaseCount] == 3)
            #expect(state != nil)
        }
        #expect(state == nil)
        #expect(try upstream.value(forKey: "cacheReleaseCount") == .int(3))
    }

    /// A `Defaults` over a cache receives its events from the cache directly (see
    /// `CacheDirectObserver`): the registration goes with the `Defaults`, and the cache then
    /// calls no one, while a later `Defaults` receives every event.
    @Test func aDefaultsOverACacheUnregistersWhenReleased() throws {
        let cache = MemoryProvider().cached()
        weak var released: Defaults?
        do {
            let defaults = Defaults(cache)
            released = defaults
            defaults[.cacheReleaseCount] = 1
            #expect(cache.directObserverCount == 1)
            #expect(Defaults(cache).isCached)
        }
        #expect(released == nil)
        #expect(cache.directObserverCount == 0)
        try cache.setValue(.int(2), forKey: "cacheReleaseCount")
        let later = Defaults(cache)
        let seen = later.changes()
        try cache.setValue(.int(3), forKey: "cacheReleaseCount")
        #expect(later[.cacheReleaseCount] == 3)
        _ = seen
        #expect(cache.directObserverCount == 1)
    }
}

@Suite struct CachingProviderEventTests {
    @Test func eachChangeIsReportedOnceAndSkippedWritesNotAtAll() throws {
        let cache = MemoryProvider().cached()
        let log = EventLog(cache)
        let second = EventLog(cache)
        try cache.setValue(.int(1), forKey: "a")
        try cache.setValue(.int(1), forKey: "a")
        try cache.apply([.set("a", .int(1)), .set("b", .int(2))])
        try cache.removeValue(forKey: "a")
        try cache.removeValue(forKey: "a")
        let expected = [
            DefaultsChangeEvent(key: "a", newValue: .int(1)),
            DefaultsChangeEvent(key: "b", newValue: .int(2)),
            DefaultsChangeEvent(key: "a", newValue: nil),
        ]
        #expect(log.all == expected)
        #expect(second.all == expected)
    }

    /// A write the upstream finds redundant (the key was not cached) reports nothing either.
    @Test func aWriteTheUpstreamFindsRedundantReportsNothing() throws {
        let cache = MemoryProvider(["a": .int(1)]).cached()
        let log = EventLog(cache)
        try cache.setValue(.int(1), forKey: "a")
        #expect(log.all.isEmpty)
    }

    /// Without a commit count, an external change forgets every answer (a later event of the same
    /// batch may not have arrived yet: `SkippedWriteTests`) and is passed on.
    @Test func anExternalChangeForgetsEveryAnswerAndIsPassedOn() throws {
        let spy = SpyProvider(["a": .int(1), "b": .int(1)])
        let cache = spy.cached()
        let log = EventLog(cache)
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "b")
        spy.externalWrite("a", .int(2))
        #expect(log.all == [DefaultsChangeEvent(key: "a", newValue: .int(2), origin: .external)])
        #expect(cache.cachedEntry(forKey: "a") == nil)
        #expect(cache.cachedEntry(forKey: "b") == nil)
        #expect(try cache.value(forKey: "a") == .int(2))
        #expect(try cache.value(forKey: "b") == .int(1))
    }

    @Test func anExternalRemovalInvalidatesTheKey() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        _ = try cache.value(forKey: "a")
        spy.externalWrite("a", nil)
        #expect(try cache.value(forKey: "a") == nil)
    }

    @Test func aWriteMadeOnTheUpstreamDirectlyInvalidatesTheKey() throws {
        let spy = SpyProvider(["a": .int(1)])
        let cache = spy.cached()
        let log = EventLog(cache)
        _ = try cache.value(forKey: "a")
        try spy.setValue(.int(2), forKey: "a")
        #expect(try cache.value(forKey: "a") == .int(2))
        #expect(log.all == [DefaultsChangeEvent(key: "a", newValue: .int(2))])
    }

    /// The cache's own write event does not evict the value the write just cached.
    @Test func theEventOfAWriteKeepsItsValueCached() throws {
        let spy = SpyProvider()
        let cache = spy.cached()
        let log = EventLog(cache)
        try cache.setValue(.int(1), forKey: "a")
        #expect(log.all.count == 1)
        #expect(cache.cachedEntry(forKey: "a") == .some(.int(1)))
    }

    /// Listeners run with no lock held, so they may read and write the cache.
    @Test func aListenerMayReadAndWriteTheCache() throws {
        let cache = MemoryProvider().cached()
        let seen = Mutex<[DefaultsValue?]>([])
        let observation = cache.observe { event in
            guard event.key == "a" else { return }
            seen.withLock { $0.append(try? cache.value(forKey: "a")) }
            try? cache.setValue(.int(99), forKey: "mirror")
        }
        try cache.setValue(.int(1), forKey: "a")
        #expect(seen.withLock { $0 } == [.int(1)])
        #expect(try cache.value(forKey: "mirror") == .int(99))
        observation.cancel()
    }

    @Test func changesStreamDeliversTheCachesEvents() async throws {
        let cache = MemoryProvider().cached()
        let stream = cache.changes()
        try cache.setValue(.string("dark"), forKey: "ui.theme")
        var iterator = stream.makeAsyncIterator()
        let event = await iterator.next()
        #expect(event == DefaultsChangeEvent(key: "ui.theme", newValue: .string("dark")))
    }
}

extension DefaultsKeys {
    fileprivate static let cacheReleaseCount = DefaultsKey<Int>("cacheReleaseCount", default: 0)
}
