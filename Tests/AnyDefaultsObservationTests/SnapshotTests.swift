import AnyDefaults
import Testing

@Suite struct SnapshotTests {
    @Test(arguments: Backend.allCases) func aSnapshotIsAnImmutableCopyWithTypedAccess(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.volume] = 0.8
        defaults[.layout] = Layout(columns: 3, sidebar: false)
        defaults.set("ada", forKey: "name")
        defaults.register(defaults: ["muted": true])

        let snapshot = defaults.snapshot()
        defaults[.volume] = 0.1
        defaults.removeObject(forKey: "name")

        #expect(snapshot[.volume] == 0.8)
        #expect(snapshot[.layout] == Layout(columns: 3, sidebar: false))
        #expect(snapshot[.muted] == true)                       // registered default
        #expect(snapshot[.theme] == .light)                     // the key's default
        #expect(snapshot["name"] == .string("ada"))
        #expect(snapshot.value(String.self, forKey: "name") == "ada")
        #expect(snapshot.codable(Layout.self, forKey: "layout") == Layout(columns: 3, sidebar: false))
        #expect(Set(snapshot.keys) == ["volume", "layout", "name"])
        #expect(snapshot.hasValue(forKey: "name"))
        #expect(!snapshot.hasValue(forKey: "muted"))
        #expect(defaults.snapshot()[.volume] == 0.1)
        #expect(defaults.snapshot() != snapshot)
    }

    @Test func anUnreadableValueReadsAsTheDefaultOrThrows() {
        let defaults = Defaults(AnyDefaultsMemory.InMemoryProvider())
        defaults.set("loud", forKey: "volume")
        let snapshot = defaults.snapshot()
        #expect(snapshot[.volume] == 0.5)
        #expect(throws: DefaultsError.self) { try snapshot.value(for: .volume) }
    }

    @Test(arguments: Backend.allCases) func aSnapshotOfChosenKeysHoldsOnlyThose(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.volume] = 0.8
        defaults[.muted] = true
        defaults.set("ada", forKey: "name")
        let audio = defaults.snapshot(keys: [DefaultsKeys.volume, DefaultsKeys.muted, DefaultsKeys.theme])
        #expect(audio.values == ["volume": .double(0.8), "muted": .bool(true)])
        #expect(audio[.theme] == .light)
        #expect(audio["name"] == nil)
    }

    @Test(arguments: Backend.allCases) func aScopedSnapshotHasKeysWithoutThePrefix(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults.set("dark", forKey: "ui.theme")
        defaults.set(1, forKey: "other")
        defaults.register(defaults: ["ui.compact": true, "elsewhere": 1])
        let ui = defaults.scoped("ui.").snapshot()
        #expect(ui.values == ["theme": .string("dark")])
        #expect(ui.registeredDefaults == ["compact": .bool(true)])
        #expect(ui[.theme] == .dark)
    }

    @Test(arguments: Backend.allCases) func theStreamYieldsTheCurrentSnapshotThenOnePerChange(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.volume] = 0.8
        let snapshots = defaults.snapshots(keys: [DefaultsKeys.volume, DefaultsKeys.muted])
        defaults.set(1, forKey: "unrelated")        // not a chosen key: no snapshot
        defaults[.muted] = true
        try defaults.write { tx in                   // one batch: one snapshot
            tx[.volume] = 0.2
            tx[.muted] = false
        }
        let seen = try await first(3, of: snapshots)
        #expect(seen.map { $0[.volume] } == [0.8, 0.8, 0.2])
        #expect(seen.map { $0[.muted] } == [false, true, false])
    }

    @Test(arguments: Backend.allCases) func theWholeStoreStream(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let snapshots = defaults.snapshots()
        try fixture.open().set("ada", forKey: "name")      // through another instance
        defaults.removeObject(forKey: "name")
        let seen = try await first(3, of: snapshots)
        #expect(seen.map(\.values) == [[:], ["name": .string("ada")], [:]])
    }
}
