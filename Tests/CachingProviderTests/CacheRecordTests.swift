import AnyDefaultsCore
import Testing

/// The cache keeps one record per key it knows something of (an answer, a read or write in
/// flight, a typed key's slot). These tests check that a record goes once it holds nothing: a
/// program that writes, fails or is told of changes for ever more keys must not grow the cache
/// beyond the answers it holds.
@Suite struct CacheRecordTests {
    private static let keys = (0..<200).map { "key.\($0)" }

    @Test func writesKeepARecordPerCachedAnswerAndInvalidationDropsThem() throws {
        let cache = SpyProvider().cached()
        for key in Self.keys { try cache.setValue(.string(key), forKey: key) }
        #expect(cache.cachedKeyCount == Self.keys.count)
        #expect(cache.trackedKeyCount == Self.keys.count)

        for key in Self.keys.prefix(50) { try cache.removeValue(forKey: key) }
        #expect(cache.cachedKeyCount == Self.keys.count, "a removal caches the absence")

        for key in Self.keys.prefix(20) { cache.invalidate(key) }
        #expect(cache.cachedKeyCount == Self.keys.count - 20)
        #expect(cache.trackedKeyCount == Self.keys.count - 20)

        cache.invalidateAll()
        #expect(cache.cachedKeyCount == 0)
        #expect(cache.trackedKeyCount == 0)
    }

    @Test func failedWritesAndBatchesLeaveNoRecord() throws {
        let spy = SpyProvider()
        let cache = spy.cached()
        spy.failNextWrites(Self.keys.count)
        for key in Self.keys {
            #expect(throws: DefaultsError.self) { try cache.setValue(.int(1), forKey: key) }
        }
        spy.failNextWrites(1)
        #expect(throws: DefaultsError.self) { try cache.apply(Self.keys.map { .set($0, .int(2)) }) }
        #expect(cache.trackedKeyCount == 0)
        #expect(cache.cachedKeyCount == 0)
        // And the cache still works afterwards.
        try cache.setValue(.int(3), forKey: "key.0")
        #expect(try cache.value(forKey: "key.0") == .int(3))
        #expect(cache.trackedKeyCount == 1)
    }

    @Test func failedReadsLeaveNoRecord() throws {
        let cache = SpyProvider().cached()
        for _ in 0..<10 {
            #expect(throws: DefaultsError.self) { try cache.value(forKey: "") }
            #expect(throws: DefaultsError.self) { try cache.freshValue(forKey: "") }
        }
        #expect(cache.trackedKeyCount == 0)
    }

    @Test func externalChangesDropTheRecordsOfTheKeysTheyInvalidate() throws {
        let spy = SpyProvider(Dictionary(uniqueKeysWithValues: Self.keys.map { ($0, DefaultsValue.int(0)) }))
        let cache = spy.cached()
        for key in Self.keys { #expect(try cache.value(forKey: key) == .int(0)) }
        #expect(cache.trackedKeyCount == Self.keys.count)
        for key in Self.keys { spy.externalWrite(key, .int(1)) }
        #expect(cache.cachedKeyCount == 0)
        #expect(cache.trackedKeyCount == 0)
        // Events for keys the cache never saw leave nothing behind either.
        for index in 0..<100 { spy.externalWrite("unseen.\(index)", .int(1)) }
        #expect(cache.trackedKeyCount == 0)
        for key in Self.keys { #expect(try cache.value(forKey: key) == .int(1)) }
    }

    @Test func aRemovalOfEveryKeyDropsEveryRecord() throws {
        let cache = SpyProvider().cached()
        for key in Self.keys { try cache.setValue(.bool(true), forKey: key) }
        try cache.removeAll()
        #expect(cache.trackedKeyCount == 0)
        for key in Self.keys { #expect(try cache.value(forKey: key) == nil) }
        #expect(cache.trackedKeyCount == Self.keys.count, "the absences read back are cached")
    }
}
