import AnyDefaults
import Foundation
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

@Suite struct ReadmeExamplesTests {
    @Test func usingItInAnApp() throws {
        try withTemporaryDirectory { directory in
            let store = try ProviderRegistry.standard.makeProvider("json:\(directory.path)/myapp/settings.json")
            let defaults = Defaults(store)

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
            #expect(try store.value(forKey: "ui.font") == .string("mono"))

            let layout = try defaults.throwing.value(for: .readmeLayout)
            #expect(layout.columns == 3)
            // The layout is stored as a dictionary, readable by any backend.
            #expect(try store.value(forKey: "layout") == .dictionary(["columns": .int(3), "sidebar": .bool(true)]))
        }
    }

    @Test func theProviderLevel() async throws {
        let store: any DefaultsProvider = InMemoryProvider()
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
