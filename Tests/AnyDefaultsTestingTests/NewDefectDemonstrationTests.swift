import AnyDefaultsCore
import BrokenProviders
import Foundation
import Synchronization
import TestSupport
import Testing

/// Each of the defect kinds added after the first hundred really breaks the contract: a direct,
/// deterministic demonstration, so that a suite run in which the defect passes shows a gap of the
/// suite, not a defect that does nothing. (The kinds whose effect needs another process or a
/// kill — removeIfPresentAtomicOnlyInProcess, conditionalBatchCommittedChangeByChange — are
/// broken by construction and not shown here.)
@Suite struct NewDefectDemonstrationTests {
    static func provider(_ defect: Defect, _ directory: TemporaryDirectory) throws -> BrokenFileProvider {
        try BrokenFileProvider(defect, directory: directory.url)
    }

    /// Collects events.
    final class Events: Sendable {
        let events = Mutex<[DefaultsChangeEvent]>([])
        func record(_ event: DefaultsChangeEvent) { events.withLock { $0.append(event) } }
        var all: [DefaultsChangeEvent] { events.withLock { $0 } }
    }

    @Test func comparesNestedNumbersByValue() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.comparesNestedNumbersByValue, directory)
            try store.setValue(.array([.int(1), .double(-0.0)]), forKey: "k")
            // [1, -0.0] is not [1.0, 0.0]: the batch must not apply.
            let applied = try store.apply([.set("m", .int(1))], ifUnchanged: ["k": .array([.double(1), .double(0)])])
            #expect(applied, "the defect compares nested numbers by value")
        }
    }

    @Test func comparesStringsCanonically() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.comparesStringsCanonically, directory)
            try store.setValue(.string("caf\u{E9}"), forKey: "k")
            let applied = try store.apply([.set("m", .int(1))], ifUnchanged: ["k": .string("cafe\u{301}")])
            #expect(applied, "the defect takes an NFD string for the NFC one stored")
        }
    }

    @Test func compareAndSetNaNNeverMatches() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.compareAndSetNaNNeverMatches, directory)
            try store.setValue(.double(.nan), forKey: "k")
            #expect(try store.apply([.set("m", .int(1))], ifUnchanged: ["k": .double(.nan)]) == false, "a NaN never matches")
            #expect(try store.removeValues(ifUnchanged: ["k": .double(.nan)]).isEmpty, "a move would never delete a NaN")
        }
    }

    @Test func prefixIgnoresASCIICase() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.prefixIgnoresASCIICase, directory)
            try store.apply([.set("User.name", .int(1)), .set("user.name", .int(2))])
            #expect(try store.keys(withPrefix: "user.") == ["User.name", "user.name"])
        }
    }

    @Test func prefixValuesCachedUntilKeysChange() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.prefixValuesCachedUntilKeysChange, directory)
            try store.setValue(.int(1), forKey: "p.a")
            _ = try store.allValues(withPrefix: "p.")
            try store.setValue(.int(2), forKey: "p.a")
            #expect(try store.allValues(withPrefix: "p.") == ["p.a": .int(1)], "the overwrite is not seen")
        }
    }

    @Test func publishesBatchKeyByKey() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.publishesBatchKeyByKey, directory)
            let keys = (0..<20).map { "b.\($0)" }
            try store.apply(keys.map { .set($0, .int(0)) })
            let torn = Atomic<Bool>(false)
            let done = Atomic<Bool>(false)
            let reader = Thread {
                while !done.load(ordering: .relaxed) {
                    if let all = try? store.allValues(), Set(keys.map { all[$0] }).count > 1 { torn.store(true, ordering: .relaxed) }
                }
            }
            reader.start()
            for round in 1...50 { try store.apply(keys.map { .set($0, .int(Int64(round))) }) }
            done.store(true, ordering: .relaxed)
            let sawHalf = torn.load(ordering: .relaxed)
            #expect(sawHalf, "a reader saw half a batch")
        }
    }

    @Test func asyncWritesReportNothing() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Self.provider(.asyncWritesReportNothing, directory)
            let events = Events()
            let observation = store.observe { events.record($0) }
            defer { observation.cancel() }
            try await store.setValueAsync(.int(1), forKey: "a")
            try await store.applyAsync([.set("b", .int(1))])
            try store.setValue(.int(1), forKey: "c")
            try await Task.sleep(for: .milliseconds(100))
            #expect(events.all.map(\.key) == ["c"], "only the synchronous write is reported")
        }
    }

    @Test func asyncSkipsCanonicalKeys() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Self.provider(.asyncSkipsCanonicalKeys, directory)
            try await store.setValueAsync(.int(1), forKey: "cafe\u{301}")
            #expect(try store.value(forKey: "caf\u{E9}") == nil, "the NFD spelling was stored as a key of its own")
            try store.setValue(.int(2), forKey: "caf\u{E9}")
            #expect(try store.keys().count == 2, "one key listed twice")
        }
    }

    @Test func removeValueIfPresentBySpelling() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.removeValueIfPresentBySpelling, directory)
            try store.setValue(.int(1), forKey: "caf\u{E9}")
            #expect(try store.removeValueIfPresent(forKey: "cafe\u{301}") == false)
            #expect(try store.value(forKey: "caf\u{E9}") == .int(1), "not removed")
        }
    }

    @Test func readsSwallowExternalEvents() async throws {
        try await withTemporaryDirectory { directory in
            let observed = try Self.provider(.readsSwallowExternalEvents, directory)
            let other = try Self.provider(.readsSwallowExternalEvents, directory)
            let events = Events()
            let observation = observed.observe { events.record($0) }
            defer { observation.cancel() }
            try await Task.sleep(for: .milliseconds(50))
            for round in 0..<20 {
                try other.setValue(.int(Int64(round)), forKey: "x")
                _ = try observed.value(forKey: "x")   // reloads before the watcher does, most of the time
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(events.all.count < 20, "external changes lost: \(events.all.count) of 20 reported")
        }
    }

    @Test func dropsEventsOfLargeBatches() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Self.provider(.dropsEventsOfLargeBatches, directory)
            let events = Events()
            let observation = store.observe { events.record($0) }
            defer { observation.cancel() }
            try store.apply((0..<100).map { .set("k.\($0)", .int(Int64($0))) })
            try await Task.sleep(for: .milliseconds(100))
            #expect(events.all.count == 64)
        }
    }

    @Test func noOpCheckMergesEquivalentStrings() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.noOpCheckMergesEquivalentStrings, directory)
            try store.setValue(.array([.string("cafe\u{301}")]), forKey: "k")
            try store.setValue(.array([.string("caf\u{E9}")]), forKey: "k")
            #expect(try store.value(forKey: "k") == .array([.string("cafe\u{301}")]), "the second write was dropped as a no-op")
        }
    }

    @Test func batchErrorNamesFirstKey() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.batchErrorNamesFirstKey, directory)
            var deep = DefaultsValue.int(0)
            for _ in 0..<600 { deep = .array([deep]) }
            do throws(DefaultsError) {
                try store.apply([.set("fine", .int(1)), .set("deep", deep)])
                Issue.record("no error")
            } catch {
                #expect(error.key == "fine", "the error names the wrong key")
            }
        }
    }

    @Test func externalEventsToFirstObserverOnly() async throws {
        try await withTemporaryDirectory { directory in
            let observed = try Self.provider(.externalEventsToFirstObserverOnly, directory)
            let other = try Self.provider(.externalEventsToFirstObserverOnly, directory)
            let first = Events()
            let second = Events()
            let observations = [observed.observe { first.record($0) }, observed.observe { second.record($0) }]
            defer { for observation in observations { observation.cancel() } }
            try other.setValue(.int(1), forKey: "x")
            try await Task.sleep(for: .milliseconds(300))
            #expect(first.all.count == 1 && second.all.isEmpty)
        }
    }

    @Test func longKeyLookupsFailWithIOFailure() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.provider(.longKeyLookupsFailWithIOFailure, directory)
            let key = String(repeating: "k", count: 16_384)
            #expect(throws: DefaultsError.self) { try store.setValue(.int(1), forKey: key) }
            do throws(DefaultsError) {
                _ = try store.value(forKey: key)
                Issue.record("no error")
            } catch {
                #expect(error.code == .ioFailure, "a lookup of a long key fails with ioFailure, not nil or invalidKey")
            }
        }
    }
}
