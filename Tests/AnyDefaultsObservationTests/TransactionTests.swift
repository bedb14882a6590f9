import AnyDefaults
import Testing
import TestSupport

struct Abort: Error {}

@Suite struct TransactionTests {
    @Test(arguments: Backend.allCases) func appliesEverythingAsOneBatchAndSeesItsOwnWrites(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.launchCount] = 1
        defaults.set("old", forKey: "legacy")
        settle(defaults)
        let events = Recorder<String>()
        let observation = defaults.observe { events.record($0.key) }

        let total = try defaults.write { tx in
            tx[.launchCount] += 1
            tx[.launchCount] += 1                       // reads see the write before
            tx[.layout] = Layout(columns: 1, sidebar: false)
            tx.set("dark", forKey: "theme")
            tx.removeObject(forKey: "legacy")
            #expect(tx.value(forKey: "legacy") == nil)
            #expect(!tx.hasValue(forKey: "legacy"))
            #expect(tx.hasValue(forKey: "theme"))
            #expect(tx[.theme] == .dark)
            #expect(events.all.isEmpty)                   // nothing written yet
            #expect(defaults[.launchCount] == 1)
            return tx[.launchCount]
        }
        #expect(total == 3)
        settle(defaults)
        #expect(defaults[.launchCount] == 3)
        #expect(defaults[.theme] == .dark)
        #expect(defaults[.layout] == Layout(columns: 1, sidebar: false))
        #expect(!defaults.hasValue(forKey: "legacy"))
        #expect(events.all.filter { $0 != "settle.marker" }.sorted() == ["launchCount", "layout", "legacy", "theme"])   // one per key
        observation.cancel()
    }

    @Test func oneApplyCall() throws {
        let provider = CountingProvider()
        let defaults = Defaults(provider, cached: false)
        let before = provider.batches
        try defaults.write { tx in
            tx[.volume] = 0.1
            tx[.muted] = true
            tx.reset(.theme)
        }
        #expect(provider.batches == before + 1)
        try defaults.write { _ in }                      // nothing to apply: no call
        #expect(provider.batches == before + 1)
    }

    @Test(arguments: Backend.allCases) func anErrorThrownInsideDiscardsEverything(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.volume] = 0.5
        // A body typed `throws(DefaultsError)`: `write` throws DefaultsError (typed throws: `error`
        // below is a DefaultsError without a cast).
        do {
            try defaults.write { (tx) throws(DefaultsError) in
                tx[.volume] = 0.9
                tx.set("dark", forKey: "theme")
                throw DefaultsError(.invalidValue, "The caller changed its mind.", backend: "Test")
            }
            Issue.record("write did not throw")
        } catch {
            #expect(error.code == .invalidValue && error.backend == "Test")
        }
        #expect(defaults[.volume] == 0.5)
        #expect(!defaults.hasValue(forKey: "theme"))
        // A body throwing another error: thrown as it is, nothing written.
        #expect(throws: Abort.self) {
            try defaults.write { tx in
                tx[.volume] = 0.9
                tx.set("dark", forKey: "theme")
                throw Abort()
            }
        }
        #expect(defaults[.volume] == 0.5)
        #expect(!defaults.hasValue(forKey: "theme"))
    }

    @Test(arguments: Backend.allCases) func aValueThatCannotBeStoredFailsTheWholeTransaction(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let error = #expect(throws: DefaultsError.self) {
            try defaults.write { tx in
                tx[.volume] = 0.9
                tx.set(UInt64.max, forKey: "huge")       // beyond Int64: cannot be stored
            }
        }
        #expect(error?.code == .encodingFailed)
        #expect(error?.key == "huge")
        #expect(!defaults.hasValue(forKey: "volume"))
    }

    @Test(arguments: Backend.allCases) func aBatchTheStoreRejectsLeavesNoTrace(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let error = #expect(throws: DefaultsError.self) {
            try defaults.write { tx in
                tx[.volume] = 0.9
                tx.set(1, forKey: "")                    // an invalid key
            }
        }
        #expect(error?.code == .invalidKey)
        #expect(!defaults.hasValue(forKey: "volume"))
        #expect(defaults.supportsAtomicWrites == defaults.provider.capabilities.contains(.atomicBatch))
        #expect(defaults.supportsAtomicWrites)            // the in-memory backend is atomic
    }

    @Test(arguments: Backend.allCases) func removeAllInsideATransaction(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let ui = defaults.scoped("ui.")
        defaults.set(1, forKey: "ui.a")
        defaults.set(2, forKey: "keep")
        try ui.write { tx in
            tx.set(3, forKey: "b")
            tx.removeAll()
            #expect(!tx.hasValue(forKey: "a"))
            #expect(!tx.hasValue(forKey: "b"))
            tx.set(4, forKey: "c")
        }
        #expect(Set(defaults.keys()) == ["keep", "ui.c"])
    }

    @Test func codableValuesInATransaction() throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        try defaults.write { tx in
            tx.setCodable(Layout(columns: 7, sidebar: true), forKey: "plain")
            #expect(tx.codable(Layout.self, forKey: "plain") == Layout(columns: 7, sidebar: true))
            tx.setCodable(Optional<Layout>.none, forKey: "gone")
        }
        #expect(defaults.codable(Layout.self, forKey: "plain") == Layout(columns: 7, sidebar: true))
    }
}

/// A body that throws nothing gives a `write` typed `throws(DefaultsError)`: this compiles only
/// if `error` is a `DefaultsError`.
@Test func aBodyThatThrowsNothingMakesWriteThrowDefaultsError() {
    let defaults = Defaults(MemoryProvider())
    do {
        try defaults.write { tx in tx.set(1, forKey: "a") }
        let error: DefaultsError? = nil
        #expect(error == nil)
    } catch {
        let typed: DefaultsError = error
        Issue.record("unexpected \(typed)")
    }
    #expect(defaults.integer(forKey: "a") == 1)
}
