import AnyDefaults
import Synchronization
import Testing
import TestSupport

@Suite struct ChangeStreamTests {
    @Test(arguments: Backend.allCases) func oneEventPerRealChangeAndNoneForSkippedWrites(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let events = defaults.changes()
        defaults[.volume] = 0.8
        defaults[.volume] = 0.8                 // same value: nothing
        defaults.removeObject(forKey: "absent") // absent: nothing
        defaults.set("dark", forKey: "theme")
        defaults.reset(.volume)
        let seen = try await first(3, of: events)
        #expect(seen.map(\.key) == ["volume", "theme", "volume"])
        #expect(seen.map(\.newValue) == [.double(0.8), .string("dark"), nil])
    }

    @Test(arguments: Backend.allCases) func streamsForChosenKeys(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let chosen = defaults.changes(forKeys: [DefaultsKeys.volume, "ui.theme"])
        let volumes = defaults.values(of: .volume)
        defaults[.muted] = true
        defaults[.volume] = 0.1
        defaults.set("dark", forKey: "ui.theme")
        defaults[.volume] = 0.2
        #expect(try await first(3, of: chosen).map(\.key) == ["volume", "ui.theme", "volume"])
        #expect(try await first(3, of: volumes) == [0.5, 0.1, 0.2])
    }

    @Test(arguments: Backend.allCases) func aScopeSeesItsOwnKeysWithoutThePrefix(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let ui = defaults.scoped("ui.")
        let events = ui.changes()
        let recorded = Recorder<String>()
        let observation = ui.observe { recorded.record($0.key) }
        defaults.set(1, forKey: "other")
        defaults.set("dark", forKey: "ui.theme")
        ui.set(true, forKey: "compact")
        #expect(try await first(2, of: events).map(\.key) == ["theme", "compact"])
        settle(defaults)
        #expect(recorded.all == ["theme", "compact"])
        observation.cancel()
    }

    @Test(arguments: Backend.allCases) func changesThroughAnotherInstanceArrive(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let listener = try fixture.open()
        let writer = try fixture.open()
        let events = listener.changes()
        writer[.volume] = 0.3
        writer[.volume] = 0.3
        writer[.theme] = .dark
        #expect(try await first(2, of: events).map(\.key) == ["volume", "theme"])
        #expect(listener[.volume] == 0.3)
    }

    @Test(arguments: Backend.allCases) func aListenerThatWritesDoesNotLoopOrRecurse(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let calls = Counter()
        let depth = Mutex(0)
        let deepest = Mutex(0)
        // Clamps the volume: its own write is one more change, then the value is stable.
        let observation = defaults.observe(.volume) { volume in
            calls.increment()
            let level = depth.withLock { $0 += 1; return $0 }
            deepest.withLock { $0 = max($0, level) }
            defaults[.volume] = min(volume, 1)
            depth.withLock { $0 -= 1 }
        }
        defaults[.volume] = 3
        #expect(waitUntil { calls.count == 2 })         // 3, then the clamped 1
        settle(defaults)
        #expect(calls.count == 2)              // writing 1 again is no change: no third call
        #expect(defaults[.volume] == 1)
        #expect(deepest.withLock { $0 } == 1)  // never called from inside itself
        observation.cancel()
    }

    @Test func aCancelledOrReleasedObservationStops() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let calls = Counter()
        var observation: DefaultsObservation? = defaults.observe { _ in calls.increment() }
        defaults[.volume] = 0.1
        observation = nil
        defaults[.volume] = 0.2
        #expect(calls.count == 1)
        _ = observation
    }

    @Test func anEndedStreamStopsObserving() async throws {
        let provider = CountingProvider()
        let defaults = Defaults(provider, cached: false)
        let facadeOnly = provider.observations     // the facade's one subscription, shared by all
        let observersBefore = defaults.changeObserverCount
        do {
            let events = defaults.changes()
            let values = defaults.values(of: .volume)
            let snapshots = defaults.snapshots()
            #expect(defaults.changeObserverCount == observersBefore + 3)
            #expect(provider.observations == facadeOnly)
            defaults[.volume] = 0.1
            #expect(try await first(1, of: events).count == 1)
            #expect(try await first(2, of: values) == [0.5, 0.1])
            #expect(try await first(1, of: snapshots).count == 1)
        }
        #expect(defaults.changeObserverCount == observersBefore)
        #expect(provider.observations == facadeOnly)
    }
}
