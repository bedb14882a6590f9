import AnyDefaultsCore
import AnyDefaultsMemory
import Foundation
import Observation
import Synchronization
import Testing
import TestSupport

// Typed reads through `Defaults` take the answer a cache published for their key without the
// cache's lock (`CacheReadPath`). These tests hold that path to the locked one: every change the
// cache learns of withdraws the answer, across many caches per key, many threads, and against a
// reference model.

private let counterKey = DefaultsKey<Int>("k", default: -1)
private let textKey = DefaultsKey<String>("text", default: "")

/// A typed read of "k" after each kind of change gives what the store holds: the published
/// answer never outlives the entry it was taken from.
@Test(arguments: Interference.allCases)
func aPublishedAnswerIsWithdrawnByEveryChange(_ interference: Interference) throws {
    let spy = SpyProvider(["k": .int(1)])
    let cache = CachingProvider(spy)
    let defaults = Defaults(cache)
    // Twice: the first read fills the cache, the second publishes, the third reads published.
    #expect(defaults[counterKey] == 1)
    #expect(defaults[counterKey] == 1)
    #expect(defaults[counterKey] == 1)
    try interference.perform(on: cache, upstream: spy)
    let expected = spy.stored("k").flatMap { if case .int(let value) = $0 { Int(value) } else { nil } } ?? -1
    #expect(defaults[counterKey] == expected)
    #expect(defaults[counterKey] == expected)
}

/// Hits answered without the lock count in the statistics like the others, and a reset clears
/// them.
@Test func hitsWithoutTheLockAreCounted() throws {
    let defaults = Defaults(MemoryProvider(["k": .int(5)]))
    _ = defaults[counterKey]  // a miss: fills the cache
    let before = try #require(defaults.statistics as CacheStatistics?)
    for _ in 0..<1000 { _ = defaults[counterKey] }
    let after = try #require(defaults.statistics as CacheStatistics?)
    #expect(after.hits - before.hits == 1000)
    #expect(after.misses == before.misses)
    defaults.resetStatistics()
    #expect(defaults.statistics?.hits == 0)
    _ = defaults[counterKey]
    #expect(defaults.statistics?.hits == 1)
}

/// One key read from more stores than it remembers slots for: each store answers with its own
/// value, before and after writes.
@Test func oneKeyReadFromManyStoresAnswersForEach() {
    let stores = (0..<12).map { Defaults(MemoryProvider(["k": .int($0)])) }
    for _ in 0..<3 {
        for (index, store) in stores.enumerated() { #expect(store[counterKey] == index) }
    }
    for (index, store) in stores.enumerated() { store[counterKey] = index * 100 }
    for (index, store) in stores.enumerated() { #expect(store[counterKey] == index * 100) }
    // A store that goes away leaves no answer behind for the others.
    var transient: Defaults? = Defaults(MemoryProvider(["k": .int(7)]))
    #expect(transient?[counterKey] == 7)
    transient = nil
    #expect(stores[3][counterKey] == 300)
}

/// A key outlives many stores, one after the other: the link of a store that went away is taken
/// by the next, and each store answers with its own value. Keys made and dropped by the thousand
/// (a key made per read) release what they remembered.
@Test func keysAndStoresComeAndGo() {
    for round in 0..<40 {
        let defaults = Defaults(MemoryProvider(["k": .int(Int64(round))]))
        #expect(defaults[counterKey] == round)
        #expect(defaults[counterKey] == round)
        defaults[counterKey] = round + 1000
        #expect(defaults[counterKey] == round + 1000)
    }
    let defaults = Defaults(MemoryProvider(["k": .int(1)]))
    for index in 0..<5000 {
        let key = DefaultsKey<Int>(index % 2 == 0 ? "k" : "absent\(index)", default: -7)
        #expect(defaults[key] == (index % 2 == 0 ? 1 : -7))
    }
}

/// Two key objects with the same name share one slot per store, and a scoped store keeps to
/// its own full keys.
@Test func keysOfOneNameAndScopedStoresAgree() {
    let defaults = Defaults(MemoryProvider())
    let twin = DefaultsKey<Int>("k", default: -1)
    defaults[counterKey] = 4
    #expect(defaults[twin] == 4)
    #expect(defaults[twin] == 4)
    defaults[twin] = 5
    #expect(defaults[counterKey] == 5)
    let scoped = defaults.scoped("s.")
    #expect(scoped[counterKey] == -1)
    scoped[counterKey] = 6
    #expect(scoped[counterKey] == 6)
    #expect(defaults[counterKey] == 5)
    #expect(defaults.integer(forKey: "s.k") == 6)
}

/// Generated operations against a dictionary: every typed read agrees with the model, whatever
/// mix of writes, removals, batches, invalidations and changes made behind the cache's back
/// came before.
@Test(arguments: [1, 2, 3, 4, 5])
func typedReadsFollowAReferenceModel(seed: UInt64) throws {
    var random = SeededGenerator(seed: seed)
    let spy = SpyProvider()
    let cache = CachingProvider(spy)
    let defaults = Defaults(cache)
    let names = ["a", "b", "c", "d"]
    let keys = names.map { DefaultsKey<Int>($0, default: -1) }
    var model: [String: Int] = [:]
    for step in 0..<3000 {
        let index = Int(random.next() % UInt64(names.count))
        let name = names[index]
        let value = Int(random.next() % 5)
        switch random.next() % 10 {
        case 0, 1, 2, 3:
            #expect(defaults[keys[index]] == model[name] ?? -1, "step \(step), read of \(name)")
        case 4:
            defaults[keys[index]] = value
            model[name] = value
        case 5:
            defaults.reset(keys[index])
            model[name] = nil
        case 6:
            try cache.apply([.set(name, .int(Int64(value))), .remove(names[(index + 1) % names.count])])
            model[name] = value
            model[names[(index + 1) % names.count]] = nil
        case 7:
            spy.silentWrite(name, .int(Int64(value)))
            cache.invalidate(name)
            model[name] = value
        case 8:
            spy.externalWrite(name, .int(Int64(value)))
            model[name] = value
        default:
            if random.next() % 4 == 0 {
                try cache.removeAll()
                model = [:]
            } else {
                spy.silentWrite(name, nil)
                cache.invalidateAll()
                model[name] = nil
            }
        }
    }
    for (index, name) in names.enumerated() { #expect(defaults[keys[index]] == model[name] ?? -1) }
}

/// Readers on several threads while one thread writes ever larger numbers and long strings and
/// another invalidates everything now and then: no reader sees a value go back, every string
/// read is one that was written whole (an answer freed while read would show), and once the
/// writes are done every reader sees the last ones.
@Test func concurrentReadersSeeNoValueGoBack() {
    let defaults = Defaults(MemoryProvider())
    let writes = 20_000
    let done = Atomic<Bool>(false)
    let failures = Mutex<[String]>([])
    @Sendable func text(_ number: Int) -> String { "value \(number) " + String(repeating: "x", count: 40) + " \(number)" }
    runOnThreads(6) { thread in
        switch thread {
        case 0:
            for number in 0...writes {
                defaults[counterKey] = number
                defaults[textKey] = text(number)
            }
            done.store(true, ordering: .releasing)
        case 1:
            while !done.load(ordering: .acquiring) {
                defaults.invalidateCache()
                usleep(50)
            }
        default:
            var last = -1
            var lastText = -1
            while !done.load(ordering: .acquiring) {
                let number = defaults[counterKey]
                if number < last { failures.withLock { $0.append("\(number) after \(last)") } }
                last = number
                let read = defaults[textKey]
                if !read.isEmpty {
                    let parts = read.split(separator: " ")
                    let first = parts.count == 4 ? Int(parts[1]) : nil
                    if let first, read == text(first) {
                        if first < lastText { failures.withLock { $0.append("text \(first) after \(lastText)") } }
                        lastText = first
                    } else {
                        failures.withLock { $0.append("torn string \(read.debugDescription)") }
                    }
                }
            }
            if defaults[counterKey] != writes { failures.withLock { $0.append("final \(defaults[counterKey])") } }
            if defaults[textKey] != text(writes) { failures.withLock { $0.append("final text") } }
        }
    }
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
}

/// Events the cache did not cause (another process's, reported by the upstream, or a write made
/// on the upstream directly) reach a `Defaults` over the cache with the key path of their own key
/// (an external event first forgets every answer, the upstream counting no commits): Observation
/// of that key fires, by typed read and by name, and of another key not.
@Test(arguments: [false, true])
func changesMadeElsewhereReachObservationOfTheirKey(multiProcess: Bool) throws {
    let spy = SpyProvider(["k": .int(1), "other": .int(1)], capabilities: multiProcess ? [.atomicBatch, .multiProcess] : [.atomicBatch])
    let cache = CachingProvider(spy)
    let defaults = Defaults(cache, tracksReadsByName: true)
    let otherKey = DefaultsKey<Int>("other", default: -1)
    // The typed write makes the key's slot, whose key path the events of "k" then carry.
    defaults[counterKey] = 2
    #expect(defaults[counterKey] == 2)
    let changes: [@Sendable () -> Void] = [{ spy.externalWrite("k", .int(3)) }, { try? spy.setValue(.int(4), forKey: "k") }]
    for (step, change) in changes.enumerated() {
        let fired = Mutex<Set<String>>([])
        withObservationTracking({ _ = defaults[counterKey] }, onChange: { _ = fired.withLock { $0.insert("typed") } })
        withObservationTracking({ _ = defaults.integer(forKey: "k") }, onChange: { _ = fired.withLock { $0.insert("by name") } })
        withObservationTracking({ _ = defaults[otherKey] }, onChange: { _ = fired.withLock { $0.insert("other key") } })
        change()
        #expect(fired.withLock { $0 } == ["typed", "by name"], "step \(step)")
        #expect(defaults[counterKey] == 3 + step, "step \(step)")
    }
}
