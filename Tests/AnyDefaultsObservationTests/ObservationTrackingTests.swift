import AnyDefaults
import Observation
import Testing

@Suite struct ObservationTrackingTests {
    @Test(arguments: Backend.allCases) func typedReadTracksThatKeyAlone(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let changes = track { _ = defaults[.volume] }

        defaults[.muted] = true
        defaults.set("x", forKey: "unrelated")
        settle(defaults)
        #expect(changes.count == 0)

        defaults[.volume] = 0.9
        settle(defaults)
        #expect(changes.count == 1)
        #expect(fixture.errors.all.isEmpty)
    }

    @Test(arguments: Backend.allCases) func writingTheStoredValueAgainDoesNotFire(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.volume] = 0.7
        settle(defaults)
        let changes = track { _ = defaults[.volume] }
        defaults[.volume] = 0.7
        settle(defaults)
        #expect(changes.count == 0)
        defaults.reset(.volume)
        settle(defaults)
        #expect(changes.count == 1)
    }

    @Test(arguments: Backend.allCases) func aChangeThroughAnotherInstanceFires(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let reader = try fixture.open()
        let writer = try fixture.open()
        #expect(reader[.theme] == .light)
        let changes = track { _ = reader[.theme] }

        writer[.volume] = 0.1
        settle(reader)
        #expect(changes.count == 0)
        writer[.theme] = .dark
        settle(reader)
        #expect(changes.count == 1)
        #expect(reader[.theme] == .dark)   // the reader's cache learned of it too
    }

    @Test(arguments: Backend.allCases) func scopedReadsTrackTheirFullKey(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let ui = defaults.scoped("ui.")
        let changes = track { _ = ui[.theme] }

        defaults[.theme] = .dark                 // "theme", not "ui.theme"
        settle(defaults)
        #expect(changes.count == 0)
        defaults.set("dark", forKey: "ui.theme")
        settle(defaults)
        #expect(changes.count == 1)
    }

    /// Every way to read a typed key tracks that key alone, in an unscoped store, in a scope
    /// (under its full key) and in an empty scope (which reads like the unscoped store).
    @Test(arguments: ["", "ui.", "ui.panel."]) func everyTypedReadTracksItsFullKey(scope: String) throws {
        let root = Defaults(AnyDefaultsMemory.MemoryProvider())
        let defaults = scope.isEmpty ? root : root.scoped(scope)
        let empty = defaults.scoped("")
        let reads: [(Defaults) -> Void] = [
            { _ = $0[.launchCount] }, { _ = $0[.nickname] }, { _ = $0.hasValue(.launchCount) },
            { _ = try? $0.throwing.value(for: .launchCount) }, { _ = try? $0.throwing[.launchCount] },
            { _ = Default(.launchCount, store: $0).wrappedValue },
        ]
        let counters = reads.flatMap { read in [track { read(defaults) }, track { read(empty) }] }

        root.set(1, forKey: "launchCount" + (scope.isEmpty ? "x" : ""))   // another key
        root.set(1, forKey: scope + "nickname.x")
        #expect(counters.map(\.count) == Array(repeating: 0, count: counters.count))
        root.set(7, forKey: scope + "launchCount")
        root.set("ada", forKey: scope + "nickname")
        #expect(counters.map(\.count) == Array(repeating: 1, count: counters.count))
        #expect(defaults[.launchCount] == 7)
        #expect(empty[.nickname] == "ada")
    }

    @Test func readsByNameAreTrackedWhenAskedFor() {
        let provider = AnyDefaultsMemory.MemoryProvider()
        let plain = Defaults(provider)
        let tracking = Defaults(provider, tracksReadsByName: true)
        #expect(!plain.tracksReadsByName)
        #expect(tracking.tracksReadsByName)

        let untracked = track { _ = plain.integer(forKey: "count") }
        let tracked = track { _ = tracking.integer(forKey: "count") }
        tracking.set(1, forKey: "other")
        #expect(tracked.count == 0)
        tracking.set(2, forKey: "count")
        #expect(tracked.count == 1)
        #expect(untracked.count == 0)

        // Every reading method by name takes part.
        let reads: [(Defaults) -> Void] = [
            { _ = $0.string(forKey: "k") }, { _ = $0.bool(forKey: "k") }, { _ = $0.double(forKey: "k") },
            { _ = $0.value(forKey: "k") }, { _ = $0.object(forKey: "k") }, { _ = $0.hasValue(forKey: "k") },
            { _ = $0.value(Int.self, forKey: "k") }, { _ = $0.codable(Layout.self, forKey: "k") },
            { _ = try? $0.throwing.value(forKey: "k") },
        ]
        let counters = reads.map { read in track { read(tracking) } }
        tracking.set("v", forKey: "k")
        #expect(counters.map(\.count) == Array(repeating: 1, count: reads.count))
    }

    @Test(arguments: Backend.allCases) func listingKeysAndSnapshotsTrackEveryKey(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let listing = track { _ = defaults.keys() }
        let snapshot = track { _ = defaults.snapshot() }
        let chosen = track { _ = defaults.snapshot(keys: [DefaultsKeys.volume]) }
        defaults.set(1, forKey: "anything")
        settle(defaults)
        #expect(listing.count == 1)
        #expect(snapshot.count == 1)
        #expect(chosen.count == 0)
        defaults[.volume] = 1
        settle(defaults)
        #expect(chosen.count == 1)
    }

    @Test func registeringADefaultFiresForThatKey() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let changes = track { _ = defaults[.volume] }
        defaults.register(defaults: ["other": 1])
        #expect(changes.count == 0)
        defaults.register(defaults: ["volume": 0.25])
        #expect(changes.count == 1)
        #expect(defaults[.volume] == 0.25)
    }

    @Test(arguments: Backend.allCases) func defaultPropertiesAreTracked(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let volume = Default(wrappedValue: 0.5, "volume", store: defaults)
        let layout = Default(.layout, store: defaults)
        let volumeChanges = track { _ = volume.wrappedValue }
        let layoutChanges = track { _ = layout.wrappedValue }

        layout.wrappedValue = Layout(columns: 3, sidebar: false)
        settle(defaults)
        #expect(volumeChanges.count == 0)
        #expect(layoutChanges.count == 1)
        volume.wrappedValue = 0.2
        settle(defaults)
        #expect(volumeChanges.count == 1)
    }
}
