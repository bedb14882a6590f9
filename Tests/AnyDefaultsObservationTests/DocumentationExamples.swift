import AnyDefaults
import Foundation
import Observation
import TestSupport
import Testing

// The examples of Docs/Observation.md, compiled and run, so the document cannot drift from the
// API. Its declarations (Theme, Layout, the keys) are those of Fixtures.swift.

struct PlayerPreferences {
    @Default("volume") var volume = 0.5            // in Defaults.standard, under "volume"
    @Default("nickname") var nickname: String?     // nil until set; nil removes the key
    @Default(.theme) var theme                     // a typed key gives the name and the default
    @Default("layout") var layout = Layout(columns: 2, sidebar: true)   // Codable (DefaultsCodable)
}

final class Service {
    @Default("count") private var legacyCount = 1.0      // the old key held a Double
    @Default("index") var index = 0

    init() {
        $legacyCount.migrate(to: $index) { Int($0) - 1 }
    }
}

final class DocumentedPlayerSettings: DefaultsModel {
    @Setting("volume") var volume = 0.5            // stored as "player.volume", observable
    @Setting("server_url") var serverURL = "https://example.com"   // a key of your choosing
    @Setting(.theme) var theme                     // a typed key, under the prefix too
    @ObservableOnly var isScrubbing = false        // observable, kept in memory only
    var scratch = 0                                // ignored: neither stored nor observed
}

/// The examples that use `Defaults.standard` run with the other tests of the process-wide store,
/// one at a time.
extension StandardStoreTests {
    @Test func documentedProperties() async throws {
        defer { Defaults.useInMemoryStandard() }
        let standard = Defaults.useInMemoryStandard()

        let preferences = PlayerPreferences()
        preferences.volume = 0.8                 // stored; setters do not mutate, so a `let` is fine
        preferences.layout.columns += 1
        preferences.$volume.reset()              // removed: reads 0.5 again
        let customized = preferences.$theme.isSet

        #expect(preferences.volume == 0.5)
        #expect(standard[.layout] == Layout(columns: 3, sidebar: true))
        #expect(!customized)
        preferences.nickname = "ada"
        #expect(standard.string(forKey: "nickname") == "ada")

        let printed = Recorder<Double>()
        let task = Task {
            for await volume in preferences.$volume.values {
                printed.record(volume)           // the current volume first
                if printed.all.count == 2 { break }
            }
        }
        #expect(await eventually { printed.all.count == 1 })
        preferences.volume = 0.3
        await task.value
        #expect(printed.all == [0.5, 0.3])
    }

    @Test func documentedMigration() {
        defer { Defaults.useInMemoryStandard() }
        let standard = Defaults.useInMemoryStandard(["count": 5.0])
        let service = Service()
        #expect(service.index == 4)
        #expect(!standard.hasValue(forKey: "count"))
        #expect(Service().index == 4)            // the second launch finds nothing to migrate
    }

    @Test func documentedStandardStore() throws {
        defer { Defaults.useInMemoryStandard() }
        try withTemporaryDirectory { directory in
            Defaults.useInMemoryStandard()                          // nothing is persisted from here on
            #expect(!Defaults.standard.provider.capabilities.contains(.persistent))
            Defaults.standard = try Defaults(url: "sqlite:\(directory.path)/prefs.sqlite")
            #expect(Defaults.standard.provider.capabilities.contains(.persistent))
            Defaults.standard = try Defaults.makeStandard(environment: ["ANYDEFAULTS_STORE": "memory:"])
            #expect(!Defaults.standard.provider.capabilities.contains(.persistent))
        }
    }

    @Test func documentedModel() throws {
        defer { Defaults.useInMemoryStandard() }
        let standard = Defaults.useInMemoryStandard()
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())

        let settings = DocumentedPlayerSettings(prefix: "player.")          // on Defaults.standard
        let other = DocumentedPlayerSettings(store: defaults, prefix: "player.")
        settings.volume = 0.8
        #expect(standard.double(forKey: "player.volume") == 0.8)
        #expect(other.volume == 0.5)
        settings.theme = .dark
        settings.isScrubbing = true
        settings.scratch = 1
        #expect(Set(standard.keys()) == ["player.volume", "player.theme"])
        settings.resetAll()                                       // removes every "player." key
        #expect(standard.keys().isEmpty)
        #expect(settings.serverURL == "https://example.com")
    }
}

@Suite struct DocumentationExamples {
    @Test func aPropertyOnANamedStore() throws {
        try withTemporaryDirectory { directory in
            let defaults = try Defaults(url: "json:\(directory.path)/settings.json")
            @Default("volume", store: defaults) var volume = 0.5
            volume = 0.7
            #expect(defaults[.volume] == 0.7)
            #expect($volume.key.name == "volume")
        }
    }

    @Test func changeStreamsAndCallbacks() async throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let everything = defaults.changes()                                   // every key
        let some = defaults.changes(forKeys: [DefaultsKeys.volume, "ui.theme"])
        let volumes = defaults.values(of: .volume)                            // current value, then changes
        let themes = Recorder<Theme>()
        let observation = defaults.observe(.theme) { theme in themes.record(theme) }

        let clamp = defaults.observe(.volume) { volume in
            defaults[.volume] = min(volume, 1)    // 3 → 1 is one more change; writing 1 again is none
        }
        defaults[.volume] = 3
        defaults[.theme] = .dark

        #expect(try await first(3, of: everything).map(\.key) == ["volume", "volume", "theme"])
        #expect(try await first(2, of: some).map(\.newValue) == [.double(3), .double(1)])
        #expect(try await first(3, of: volumes) == [0.5, 3, 1])
        #expect(themes.all == [.dark])
        observation.cancel()
        clamp.cancel()
    }

    @Test func observationTracking() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let changed = Counter()
        let title = withObservationTracking {
            "Volume \(defaults[.volume])"
        } onChange: {
            changed.increment()                   // called for a change of "volume", not of other keys
        }
        #expect(title == "Volume 0.5")
        defaults[.muted] = true
        #expect(changed.count == 0)
        defaults[.volume] = 0.6
        #expect(changed.count == 1)

        let byName = Defaults(AnyDefaultsMemory.MemoryProvider(), tracksReadsByName: true)
        let tracked = track { _ = byName.integer(forKey: "launchCount") }
        byName.set(1, forKey: "launchCount")
        #expect(tracked.count == 1)
    }

    @Test func snapshots() async throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        defaults[.volume] = 0.7
        let snapshot = defaults.snapshot()
        defaults[.volume] = 0.1
        #expect(snapshot[.volume] == 0.7)    // still the old value: a snapshot never changes
        #expect(snapshot[.theme] == .light)  // stored, else registered, else the key's default

        let audio = defaults.snapshot(keys: [DefaultsKeys.volume, DefaultsKeys.muted])
        #expect(audio[.volume] == 0.1)
        var seen: [Bool] = []
        let stream = defaults.snapshots(keys: [DefaultsKeys.volume, DefaultsKeys.muted])
        defaults[.muted] = true
        for await audio in stream {
            seen.append(audio[.muted])       // the current snapshot first, then one per change
            if seen.count == 2 { break }
        }
        #expect(seen == [false, true])
    }

    @Test func transactions() throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        defaults.set(0.2, forKey: "legacy.volume")
        defaults[.muted] = true
        try defaults.write { tx in
            tx[.launchCount] += 1
            tx[.volume] = 0.8
            if tx[.volume] > 0.5 { tx[.muted] = false }    // reads see the transaction's own writes
            tx.removeObject(forKey: "legacy.volume")
        }
        #expect(defaults[.launchCount] == 1)
        #expect(defaults[.muted] == false)
        #expect(!defaults.hasValue(forKey: "legacy.volume"))
        #expect(defaults.supportsAtomicWrites)
    }
}
