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
        defaults.register(defaults: ["muted": true, "name": "registered"])

        let snapshot = defaults.snapshot()
        defaults[.volume] = 0.1
        defaults.removeObject(forKey: "name")

        #expect(snapshot[.volume] == 0.8)
        #expect(snapshot[.layout] == Layout(columns: 3, sidebar: false))
        #expect(snapshot[.muted] == true)                       // registered default
        #expect(snapshot[.theme] == .light)                     // the key's default
        #expect(snapshot["name"] == .string("ada"))             // stored and registered: the stored value
        #expect(snapshot.value(String.self, forKey: "name") == "ada")
        #expect(snapshot.codable(Layout.self, forKey: "layout") == Layout(columns: 3, sidebar: false))
        #expect(Set(snapshot.keys) == ["volume", "layout", "name"])
        #expect(snapshot.hasValue(forKey: "name"))
        #expect(!snapshot.hasValue(forKey: "muted"))
        #expect(defaults.snapshot()[.volume] == 0.1)
        #expect(defaults.snapshot() != snapshot)
    }

    @Test func anUnreadableValueReadsAsTheDefaultOrThrows() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
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

    // These step through the stream one change at a time: a backend may deliver a change's event
    // a moment after the write returns (on its watcher thread), and the stream takes a snapshot of
    // the store as it is then, so changes made in quick succession may come as one snapshot.

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func theStreamYieldsTheCurrentSnapshotThenOnePerChange(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults[.volume] = 0.8
        settle(defaults)
        var snapshots = defaults.snapshots(keys: [DefaultsKeys.volume, DefaultsKeys.muted]).makeAsyncIterator()
        let first = try #require(await snapshots.next())
        #expect(first[.volume] == 0.8)
        #expect(first.values.count == 1)

        defaults.set(1, forKey: "unrelated")        // not a chosen key: no snapshot
        defaults[.muted] = true
        let second = try #require(await snapshots.next())
        #expect(second.values == ["volume": .double(0.8), "muted": .bool(true)])

        try defaults.write { tx in                   // one batch: one snapshot
            tx[.volume] = 0.2
            tx[.muted] = false
        }
        let third = try #require(await snapshots.next())
        #expect(third.values == ["volume": .double(0.2), "muted": .bool(false)])

        defaults[.volume] = 0.3
        let fourth = try #require(await snapshots.next())   // not an intermediate state of the batch
        #expect(fourth[.volume] == 0.3)
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func theWholeStoreStream(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        var snapshots = defaults.snapshots().makeAsyncIterator()
        #expect(await snapshots.next()?.values == [:])
        try fixture.open().set("ada", forKey: "name")      // through another instance
        #expect(await snapshots.next()?.values == ["name": .string("ada")])
        defaults.removeObject(forKey: "name")
        #expect(await snapshots.next()?.values == [:])
    }
}
