import AnyDefaultsCore
import Synchronization
import Testing

/// A write of what the cache holds is skipped only where the cache knows it holds the store's
/// value: otherwise another process's write, not yet heard of, would outlast this later one.
@Suite struct SkippedWriteTests {
    /// The ways a write reaches the cache: one key, a batch, from async code.
    enum Write: CaseIterable, Sendable {
        case single, batch, async

        func callAsFunction(_ cache: CachingProvider<SpyProvider>, _ key: String, _ value: DefaultsValue?) async throws {
            switch (self, value) {
            case (.single, let value?): try cache.setValue(value, forKey: key)
            case (.single, nil): try cache.removeValue(forKey: key)
            case (.batch, let value?): try cache.apply([.set("other", .int(0)), .set(key, value)])
            case (.batch, nil): try cache.apply([.set("other", .int(0)), .remove(key)])
            case (.async, let value?): try await cache.setValueAsync(value, forKey: key)
            case (.async, nil): try await cache.removeValueAsync(forKey: key)
            }
        }
    }

    /// Another process sets the key (the spy's silent write: no event yet), then this one writes
    /// back what it had cached: the store must end with this process's value, the later one.
    @Test(arguments: Write.allCases)
    func aWriteOfTheCachedValueReachesAStoreOtherProcessesShare(_ write: Write) async throws {
        let spy = SpyProvider(["flag": .bool(true)], capabilities: [.atomicBatch, .multiProcess])
        let cache = CachingProvider(spy)
        #expect(try cache.value(forKey: "flag") == .bool(true))
        #expect(try cache.value(forKey: "absent") == nil)

        spy.silentWrite("flag", .bool(false))
        try await write(cache, "flag", .bool(true))
        #expect(spy.stored("flag") == .bool(true))

        spy.silentWrite("absent", .int(1))
        try await write(cache, "absent", nil)
        #expect(spy.stored("absent") == nil)
        #expect(cache.statistics.skippedWrites == 0)
    }

    /// Another process's batch reaches a shared store's cache as one event per key, after the
    /// upstream read them all: an observer of the first event that reads a later key gets the
    /// batch's value, never the one the cache held before (as a server reading `payload` when it
    /// hears of `ready`).
    @Test(arguments: [true, false])
    func anObserverOfAnExternalChangeReadsTheRestOfItsBatch(shared: Bool) throws {
        let spy = SpyProvider(
            ["a.ready": .int(0), "z.payload": .int(0)],
            capabilities: shared ? [.atomicBatch, .multiProcess] : [.atomicBatch])
        let cache = CachingProvider(spy)
        #expect(try cache.value(forKey: "z.payload") == .int(0))
        let seen = Mutex<[DefaultsValue?]>([])
        let observation = cache.observe { event in
            guard event.key == "a.ready" else { return }
            let payload = try? cache.value(forKey: "z.payload")
            seen.withLock { $0.append(payload ?? nil) }
        }
        defer { observation.cancel() }
        for round in Int64(1)...5 {
            spy.externalApply([.set("a.ready", .int(round)), .set("z.payload", .int(round))])
        }
        #expect(seen.withLock { $0 } == (1...5).map { .int($0) })
    }

    /// Where no other process writes (and where a shared change counter tells the cache what
    /// they did), the same writes are skipped: the upstream is not called.
    @Test(arguments: Write.allCases)
    func aWriteOfTheCachedValueIsSkippedWhereTheCacheKnowsTheStore(_ write: Write) async throws {
        let spy = SpyProvider(["flag": .bool(true), "other": .int(0)])
        let cache = CachingProvider(spy)
        #expect(try cache.value(forKey: "flag") == .bool(true))
        #expect(try cache.value(forKey: "other") == .int(0))
        #expect(try cache.value(forKey: "absent") == nil)
        let before = spy.counts.writes
        try await write(cache, "flag", .bool(true))
        try await write(cache, "absent", nil)
        #expect(spy.counts.writes == before)
        #expect(cache.statistics.skippedWrites == (write == .batch ? 4 : 2))
    }
}
