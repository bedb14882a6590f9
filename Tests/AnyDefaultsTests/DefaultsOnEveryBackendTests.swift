import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// The `Defaults` facade and the coder layer over every built-in backend, plain and cached: what
/// the in-memory tests of AnyDefaultsCodingTests show, shown again where values cross a real
/// storage format.
@Suite struct DefaultsOnEveryBackendTests {
    struct Window: Codable, Sendable, Equatable, DefaultsCodable {
        enum Mode: Codable, Sendable, Equatable { case floating(level: Int), docked(edge: String) }
        var frame: [Double]
        var title: String?
        var mode: Mode
        var opened: Date
        var icon: Data
        var link: URL
        var id: UUID
    }

    enum Theme: String, DefaultsSerializable { case light, dark }

    static let stores = ["memory:", "json:{dir}/s.json", "userdefaults:{suite}", "sqlite:{dir}/s.sqlite", "lmdb:{dir}/env"]
    static let variants = stores.flatMap { [$0 + "?cache=off", $0 + "?cache=on"] }

    /// Opens the store named by `template` in `directory` (a unique suite for userdefaults:),
    /// runs `body`, and removes what the store left.
    func withStore(_ template: String, _ body: (any DefaultsProvider) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let suite = "anydefaults-facade-\(UUID().uuidString)"
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            let text = template.replacingOccurrences(of: "{dir}", with: directory.path).replacingOccurrences(of: "{suite}", with: suite)
            try body(ProviderRegistry.standard.makeProvider(text))
        }
    }

    @Test(arguments: variants)
    func typedValuesAndCodableRoundTrip(store: String) throws {
        try withStore(store) { provider in
            let errors = Mutex<[DefaultsError]>([])
            let defaults = Defaults(provider, errorHandler: { error in errors.withLock { $0.append(error) } })
            let window = Window(
                frame: [0, -0.0, 1.5, .greatestFiniteMagnitude], title: nil, mode: .floating(level: 3),
                opened: Date(timeIntervalSinceReferenceDate: 1234.5678), icon: Data([0, 255]),
                link: URL(string: "https://example.com/a?b=c")!, id: UUID())
            let key = DefaultsKey<Window?>("window")

            defaults.set(Int8(-7), forKey: "int8")
            defaults.set(UInt64(Int64.max), forKey: "uint64")
            defaults.set(Float(0.1), forKey: "float")
            defaults.set(Theme.dark, forKey: "theme")
            defaults.set(["a": [1, 2], "b": []] as [String: [Int]], forKey: "nested")
            defaults[key] = window
            defaults.setCodable(window, forKey: "window.json", strategy: .jsonData)

            #expect(defaults.value(Int8.self, forKey: "int8") == -7)
            #expect(defaults.value(UInt64.self, forKey: "uint64") == UInt64(Int64.max))
            #expect(defaults.value(Float.self, forKey: "float") == Float(0.1))
            #expect(defaults.value(Theme.self, forKey: "theme") == .dark)
            #expect(defaults.value([String: [Int]].self, forKey: "nested") == ["a": [1, 2], "b": []])
            #expect(defaults[key] == window)
            #expect(defaults.codable(Window.self, forKey: "window.json", strategy: .jsonData) == window)
            // Stored structurally, readable by any backend and tool: the enum's case, the optional left out.
            guard case .dictionary(let stored)? = try provider.value(forKey: "window") else {
                Issue.record("the Codable value is not stored as a dictionary")
                return
            }
            #expect(stored["title"] == nil)
            #expect(stored["mode"] == .dictionary(["floating": .dictionary(["level": .int(3)])]))
            #expect(errors.withLock { $0.isEmpty }, "\(errors.withLock { $0 })")
        }
    }

    @Test(arguments: variants)
    func aValueThatFailsToDecodeIsReportedKeptAndDefaulted(store: String) throws {
        try withStore(store) { provider in
            let errors = Mutex<[DefaultsError]>([])
            let defaults = Defaults(provider, errorHandler: { error in errors.withLock { $0.append(error) } })
            try provider.setValue(.dictionary(["frame": .string("not a list")]), forKey: "window")
            try provider.setValue(.int(300), forKey: "small")
            let key = DefaultsKey<Window?>("window")

            #expect(defaults[key] == nil)
            #expect(defaults.value(Int8.self, forKey: "small") == nil)  // overflow is an error, not a wrap
            let reported = errors.withLock { $0 }
            #expect(reported.map(\.key) == ["window", "small"])
            #expect(reported.first?.code == .decodingFailed)
            #expect(reported.first?.message.contains("frame") == true)
            #expect(try provider.value(forKey: "window") != nil)  // kept, not deleted
            #expect { try defaults.throwing.value(for: key) } throws: { ($0 as? DefaultsError)?.key == "window" }
        }
    }

    @Test(arguments: variants)
    func userDefaultsShapeScopesAndRegistration(store: String) throws {
        try withStore(store) { provider in
            let defaults = Defaults(provider)
            defaults.register(defaults: ["volume": 0.5, "ui.font": "serif"])
            #expect(defaults.double(forKey: "volume") == 0.5)
            #expect(!defaults.hasValue(forKey: "volume"))

            let ui = defaults.scoped("ui.")
            ui.set("mono", forKey: "font")
            ui.set(true, forKey: "compact")
            defaults.set(2, forKey: "launches")
            #expect(defaults.string(forKey: "ui.font") == "mono")
            #expect(defaults.integer(forKey: "launches") == 2)
            let written = try Set(provider.keys())
            #expect(written == ["ui.font", "ui.compact", "launches"])

            ui.removeAll()
            let left = try Set(provider.keys())
            #expect(left == ["launches"])
            #expect(defaults.string(forKey: "ui.font") == "serif")  // back to the registered default
            defaults.removeValues(withPrefix: "launch")
            let none = try provider.keys()
            #expect(none.isEmpty)
        }
    }
}
