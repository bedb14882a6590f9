import AnyDefaultsCore
import TestSupport
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

    /// Generated operations over many keys, failures included: after each one, every answer the
    /// cache holds is what the store holds, and the cache keeps a record of exactly the keys it
    /// holds an answer for (no typed key has a slot here, and nothing is in flight).
    @Test(arguments: [11, 12, 13])
    func recordsFollowTheAnswersUnderGeneratedOperations(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let spy = SpyProvider()
        let cache = spy.cached()
        let names = (0..<40).map { "k\($0)" }
        func name() -> String { names[Int(random.next() % UInt64(names.count))] }
        for step in 0..<4000 {
            let key = name()
            let value = DefaultsValue.int(Int64(random.next() % 3))
            let fails = random.next() % 8 == 0
            if fails { spy.failNextWrites(1) }
            switch random.next() % 9 {
            case 0, 1: _ = try cache.value(forKey: key)
            case 2: _ = try? cache.setValue(value, forKey: key)
            case 3: _ = try? cache.removeValue(forKey: key)
            case 4:
                // A batch may change one key twice.
                let other = name()
                _ = try? cache.apply([.set(key, value), .remove(other), .set(other, value)])
            case 5: cache.invalidate(key)
            case 6: spy.externalWrite(key, random.next() % 2 == 0 ? value : nil)
            case 7: _ = try cache.freshValue(forKey: key)
            default:
                if random.next() % 10 == 0 { _ = try? cache.removeAll() } else { _ = try? cache.removeValueIfPresent(forKey: key) }
            }
            spy.failNextWrites(0)
            for key in names {
                if let cached = cache.cachedEntry(forKey: key) {
                    #expect(cached == spy.stored(key), "step \(step): \(key)")
                }
            }
            #expect(cache.trackedKeyCount == cache.cachedKeyCount, "step \(step)")
        }
    }
}
