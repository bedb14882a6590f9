import AnyDefaultsCore
import AnyDefaultsMemory
import Dispatch
import Foundation
import Synchronization
import Testing

/// The async writes every provider has (`setValueAsync`, `applyAsync`...): by default they run
/// the blocking write outside Swift concurrency's cooperative pool; the cache passes them on to
/// its upstream's async writes with the same bookkeeping; the facade offers them as
/// `defaults.async`.
@Suite struct AsyncWriteTests {
    /// Several writes whose tasks all run on ONE thread, all blocked inside the provider at once:
    /// possible only if the default runs each blocking write on a thread of its own and suspends
    /// the task meanwhile. Were it run inline, the first write would hold the thread and no other
    /// could enter. (A one-thread executor of its own, rather than the shared pool, which other
    /// tests keep busy.)
    @Test func theDefaultAsyncWritesBlockNoThreadOfTheCallingExecutor() throws {
        let provider = SpyProvider()
        let writers = 6
        let entered = Counter()
        let gate = DispatchSemaphore(value: 0)
        provider.beforeCommit { _ in
            entered.increment()
            gate.wait()
        }
        let executor = OneThreadExecutor()
        let finished = Counter()
        for index in 0..<writers {
            Task(executorPreference: executor) {
                try await provider.setValueAsync(.int(Int64(index)), forKey: "k\(index)")
                finished.increment()
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while entered.count < writers, Date() < deadline { usleep(1_000) }
        let blockedAtOnce = entered.count
        // And the executor's thread still runs other work while they are all blocked.
        let ran = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) { ran.signal() }
        let threadFree = ran.wait(timeout: .now() + 10) == .success
        for _ in 0..<writers { gate.signal() }
        while finished.count < writers, Date() < deadline.addingTimeInterval(20) { usleep(1_000) }
        #expect(blockedAtOnce == writers)
        #expect(threadFree)
        #expect(finished.count == writers)
        #expect(provider.counts.writes == writers)
    }

    @Test func theCachePassesAsyncWritesOnWithItsBookkeeping() async throws {
        let upstream = SpyProvider(["a": .int(1)])
        let cache = upstream.cached()
        #expect(try cache.value(forKey: "a") == .int(1))
        try await cache.setValueAsync(.int(1), forKey: "a")          // the value held: skipped
        #expect(upstream.counts.writes == 0)
        try await cache.setValueAsync(.int(2), forKey: "a")
        try await cache.applyAsync([.set("b", .string("x")), .remove("absent")])
        try await cache.removeValueAsync(forKey: "a")
        #expect(upstream.counts.batches == [[.set("a", .int(2))], [.set("b", .string("x")), .remove("absent")], [.remove("a")]])
        #expect(try cache.value(forKey: "a") == nil)
        #expect(cache.cachedEntry(forKey: "b") == .some(.string("x")))
        upstream.failNextWrites(1)
        await #expect(throws: DefaultsError.self) { try await cache.setValueAsync(.int(3), forKey: "b") }
        #expect(cache.cachedEntry(forKey: "b") == nil, "a failed write leaves the key uncached")
        #expect(try cache.value(forKey: "b") == .string("x"))
        try await cache.removeAllAsync()
        #expect(try upstream.keys().isEmpty)
        #expect(try cache.value(forKey: "b") == nil)
    }

    @Test func inMemoryAsyncWritesReportEventsLikeTheSynchronousOnes() async throws {
        let store = MemoryProvider()
        let events = Mutex<[DefaultsChangeEvent]>([])
        let observation = store.observe { event in events.withLock { $0.append(event) } }
        try await store.setValueAsync(.int(1), forKey: "a")
        try await store.applyAsync([.set("b", .bool(true)), .set("a", .int(1))])
        try await store.removeValueAsync(forKey: "a")
        try await store.removeAllAsync()
        #expect(events.withLock { $0.map { "\($0.key)=\(String(describing: $0.newValue))" } } == [
            "a=Optional(1)", "b=Optional(true)", "a=nil", "b=nil",
        ])
        await #expect(throws: DefaultsError.self) { try await store.setValueAsync(.int(1), forKey: "") }
        observation.cancel()
    }

    @Test func theFacadesAsyncWritesStoreEncodeAndForgetDecodedValues() async throws {
        let store = MemoryProvider()
        let defaults = Defaults(store)
        let volume = DefaultsKey<Double>("volume", default: 0.5)
        let tags = DefaultsKey<[String]>("tags", default: [])
        try await defaults.async.set(0.8, for: volume)
        try await defaults.async.set(["a"], for: tags)
        #expect(defaults[tags] == ["a"])                                  // decoded and kept
        try await defaults.async.set(["b", "c"], for: tags)
        #expect(defaults[tags] == ["b", "c"], "the kept decoded value was forgotten")
        try await defaults.async.set(3, forKey: "count")
        try await defaults.async.setCodable(["x": 1], forKey: "codable")
        #expect(try store.value(forKey: "volume") == .double(0.8))
        #expect(try store.value(forKey: "count") == .int(3))
        #expect(try store.value(forKey: "codable") == .dictionary(["x": .int(1)]))
        try await defaults.async.write { tx in
            tx[volume] = 0.1
            tx.set("dark", forKey: "ui.theme")
        }
        #expect(defaults[volume] == 0.1)
        #expect(defaults.string(forKey: "ui.theme") == "dark")
        try await defaults.async.reset(volume)
        #expect(defaults[volume] == 0.5)
        try await defaults.scoped("ui.").async.removeAll()
        #expect(Set(try store.keys()) == ["tags", "count", "codable"])
        try await defaults.async.removeValue(forKey: "count")
        try await defaults.async.removeAll()
        #expect(try store.keys().isEmpty)
    }
}

/// A count shared by escaping closures (an `Atomic` cannot be captured by one).
private final class Counter: Sendable {
    private let value = Atomic(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A task executor with one thread of its own (a serial queue).
private final class OneThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "AsyncWriteTests.one-thread")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
