import AnyDefaults
import Foundation
import Observation
import Synchronization
import Testing
import TestSupport

// The README's examples, compiled and run, so the README cannot drift from the API.

enum ReadmeTheme: String, DefaultsSerializable { case light, dark }
struct ReadmeLayout: Codable, DefaultsCodable, Equatable { var columns: Int; var sidebar: Bool }

extension DefaultsKeys {
    static let readmeVolume = DefaultsKey<Double>("volume", default: 0.5)
    static let readmeTheme = DefaultsKey<ReadmeTheme>("theme", default: .light)
    static let readmeLayout = DefaultsKey<ReadmeLayout>("layout", default: ReadmeLayout(columns: 2, sidebar: true))
}

struct ReadmePlayerPreferences {
    @Default("volume", store: Defaults(MemoryProvider())) var volume = 0.5
}

final class ReadmePlayerSettings: DefaultsModel {
    @Setting("volume") var volume = 0.5
    @ObservableOnly var isScrubbing = false
}

@Suite struct ReadmeExamplesTests {
    @Test func propertiesObservationTransactions() async throws {
        let defaults = Defaults(MemoryProvider())
        #expect(ReadmePlayerPreferences().volume == 0.5)
        let settings = ReadmePlayerSettings(store: defaults, prefix: "player.")
        settings.volume = 0.7
        #expect(defaults.double(forKey: "player.volume") == 0.7)

        let fired = Mutex(false)
        withObservationTracking { _ = defaults[.readmeVolume] } onChange: { fired.withLock { $0 = true } }
        defaults.set("x", forKey: "other")
        #expect(!fired.withLock { $0 })
        try defaults.write { tx in tx[.readmeVolume] = 0.8 }
        #expect(fired.withLock { $0 })
        #expect(defaults.snapshot()[.readmeVolume] == 0.8)
        for await volume in defaults.values(of: .readmeVolume) {
            #expect(volume == 0.8)
            break
        }
    }

    @Test func usingItInAnApp() throws {
        try withTemporaryDirectory { directory in
            let defaults = try Defaults(url: "json:\(directory.path)/myapp/settings.json")

            defaults.register(defaults: ["volume": 0.5, "theme": "light"])
            defaults.set(true, forKey: "onboarded")
            let launches = defaults.integer(forKey: "launchCount")
            #expect(launches == 0)

            defaults[.readmeVolume] = 0.8
            defaults[.readmeLayout].columns += 1
            #expect(defaults[.readmeLayout] == ReadmeLayout(columns: 3, sidebar: true))
            #expect(defaults[.readmeTheme] == .light)
            defaults.reset(.readmeVolume)
            #expect(defaults[.readmeVolume] == 0.5)

            let ui = defaults.scoped("ui.")
            ui.set("mono", forKey: "font")
            #expect(try defaults.provider.value(forKey: "ui.font") == .string("mono"))

            let layout = try defaults.throwing.value(for: .readmeLayout)
            #expect(layout.columns == 3)
            // The layout is stored as a dictionary, readable by any backend.
            #expect(try defaults.provider.value(forKey: "layout") == .dictionary(["columns": .int(3), "sidebar": .bool(true)]))
        }
    }

    @Test func theProviderLevel() async throws {
        let store: any DefaultsProvider = MemoryProvider()
        let events = store.changes()
        try store.setValue(.string("dark"), forKey: "ui.theme")
        try store.apply([.set("launchCount", .int(1)), .remove("legacy.theme")])
        #expect(try store.value(forKey: "ui.theme") == .string("dark"))

        var seen: [String] = []
        for await event in events {
            seen.append(event.key)
            if seen.count == 2 { break }
        }
        #expect(seen == ["ui.theme", "launchCount"])
    }
}
