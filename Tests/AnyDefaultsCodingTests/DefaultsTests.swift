import AnyDefaultsCore
import AnyDefaultsMemory
import Foundation
import Synchronization
import Testing

extension DefaultsKeys {
    static let volume = DefaultsKey<Double>("volume", default: 0.5)
    static let launchCount = DefaultsKey<Int>("launchCount", default: 0)
    static let small = DefaultsKey<Int8>("small", default: 1)
    static let nickname = DefaultsKey<String?>("nickname")
    static let fallbackName = DefaultsKey<String?>("fallbackName", default: "guest")
    static let theme = DefaultsKey<Theme>(SettingsKey.theme, default: .light)
    static let layout = DefaultsKey<Layout>("layout", default: Layout(columns: 2, sidebar: true))
    static let recent = DefaultsKey<[URL]>("recent", default: [])
}

enum SettingsKey: String, DefaultsKeyName {
    case theme = "ui.theme"
    case username
}

/// Collects what a `Defaults` reports.
final class ErrorLog: Sendable {
    private let errors = Mutex<[DefaultsError]>([])
    var all: [DefaultsError] { errors.withLock { $0 } }
    var handler: Defaults.ErrorHandler { { error in self.errors.withLock { $0.append(error) } } }
}

/// A `Defaults` over an `MemoryProvider` holding `values`, cached or not, whose errors go to
/// the returned log; the provider is returned too, to check what is stored.
func makeDefaults(
    _ values: [String: DefaultsValue] = [:], cached: Bool, policy: Defaults.DecodingFailurePolicy = .keepValue
) -> (Defaults, MemoryProvider, ErrorLog) {
    let provider = MemoryProvider(values)
    let log = ErrorLog()
    let defaults = Defaults(provider, cached: cached, errorHandler: log.handler, decodingFailurePolicy: policy)
    #expect(defaults.isCached == cached)
    return (defaults, provider, log)
}

@Suite struct DefaultsUserDefaultsShapeTests {
    @Test(arguments: [true, false]) func setAndReadEveryKind(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults(cached: cached)
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        defaults.set("ada", forKey: "name")
        defaults.set(42, forKey: "answer")
        defaults.set(true, forKey: "flag")
        defaults.set(2.5, forKey: "ratio")
        defaults.set(Data([9]), forKey: "blob")
        defaults.set(date, forKey: "when")
        defaults.set(URL(string: "https://example.com")!, forKey: "site")
        defaults.set(["a", "b"], forKey: "letters")
        defaults.set(["w": 800, "title": "Main"] as DefaultsValue, forKey: "window")

        #expect(try provider.value(forKey: "answer") == .int(42))
        #expect(defaults.string(forKey: "name") == "ada")
        #expect(defaults.integer(forKey: "answer") == 42)
        #expect(defaults.bool(forKey: "flag"))
        #expect(defaults.double(forKey: "ratio") == 2.5)
        #expect(defaults.float(forKey: "ratio") == 2.5)
        #expect(defaults.data(forKey: "blob") == Data([9]))
        #expect(defaults.date(forKey: "when") == date)
        #expect(defaults.url(forKey: "site") == URL(string: "https://example.com"))
        #expect(defaults.stringArray(forKey: "letters") == ["a", "b"])
        #expect(defaults.array(forKey: "letters")?.count == 2)
        #expect(defaults.dictionary(forKey: "window")?["w"] as? Int == 800)
        #expect(defaults.object(forKey: "answer") as? Int == 42)
        #expect(defaults.value(forKey: "name") == .string("ada"))
        #expect(Set(defaults.keys()) == ["name", "answer", "flag", "ratio", "blob", "when", "site", "letters", "window"])
        #expect(log.all.isEmpty)
    }

    @Test(arguments: [true, false]) func absentKeysReadAsEmptyValues(cached: Bool) {
        let (defaults, _, log) = makeDefaults(cached: cached)
        #expect(defaults.string(forKey: "x") == nil)
        #expect(defaults.integer(forKey: "x") == 0)
        #expect(defaults.bool(forKey: "x") == false)
        #expect(defaults.double(forKey: "x") == 0)
        #expect(defaults.object(forKey: "x") == nil)
        #expect(defaults.array(forKey: "x") == nil)
        #expect(!defaults.hasValue(forKey: "x"))
        #expect(log.all.isEmpty)
    }

    @Test(arguments: [true, false]) func gettersConvertLikeUserDefaults(cached: Bool) {
        let (defaults, _, log) = makeDefaults([
            "d": .double(3.9), "negative": .double(-3.9), "i": .int(7), "b": .bool(true), "s": .string("12"),
            "yes": .string("YES"), "word": .string("nope"), "huge": .double(1e300), "path": .string("/tmp/x"),
            "mixed": .array([.string("a"), .int(1)]),
        ], cached: cached)
        #expect(defaults.integer(forKey: "d") == 3)
        #expect(defaults.integer(forKey: "negative") == -3)
        #expect(defaults.integer(forKey: "b") == 1)
        #expect(defaults.integer(forKey: "s") == 12)
        #expect(defaults.integer(forKey: "word") == 0)
        #expect(defaults.double(forKey: "i") == 7)
        #expect(defaults.double(forKey: "s") == 12)
        #expect(defaults.bool(forKey: "i"))
        #expect(defaults.bool(forKey: "yes"))
        #expect(!defaults.bool(forKey: "word"))
        #expect(defaults.string(forKey: "i") == "7")
        #expect(defaults.string(forKey: "b") == "1")
        #expect(defaults.url(forKey: "path") == URL(fileURLWithPath: "/tmp/x"))
        #expect(defaults.stringArray(forKey: "mixed") == nil)
        #expect(log.all.isEmpty)
        // A number beyond Int's range is reported, not wrapped or clamped.
        #expect(defaults.integer(forKey: "huge") == 0)
        #expect(log.all.map(\.code) == [.typeMismatch])
        #expect(log.all.first?.key == "huge")
    }

    @Test(arguments: [true, false]) func registeredDefaultsSitBetweenStoredValuesAndKeyDefaults(cached: Bool) throws {
        let (defaults, provider, _) = makeDefaults(cached: cached)
        #expect(defaults[.volume] == 0.5)
        defaults.register(defaults: ["volume": 0.7, "name": "guest"])
        #expect(defaults[.volume] == 0.7)
        #expect(defaults.string(forKey: "name") == "guest")
        #expect(!defaults.hasValue(forKey: "name"))
        #expect(try provider.keys().isEmpty)
        defaults[.volume] = 0.9
        #expect(defaults[.volume] == 0.9)
        defaults.reset(.volume)
        #expect(defaults[.volume] == 0.7)
    }

    @Test(arguments: [true, false]) func removal(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults(["a.1": 1, "a.2": 2, "b.1": 3, "ab": 4], cached: cached)
        defaults.removeObject(forKey: "ab")
        defaults.removeObject(forKey: "missing")
        #expect(!defaults.hasValue(forKey: "ab"))
        defaults.removeValues(withPrefix: "a.")
        #expect(try provider.keys() == ["b.1"])
        defaults.removeAll()
        #expect(try provider.keys().isEmpty)
        #expect(log.all.isEmpty)
    }

    /// An empty prefix names every key: it removes nothing and is reported, in the store and in
    /// a scoped view, where removeAll still removes the scope.
    @Test(arguments: [true, false]) func anEmptyPrefixRemovesNothing(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults(["a.1": 1, "a.2": 2, "b.1": 3], cached: cached)
        defaults.removeValues(withPrefix: "")
        #expect(log.all.map(\.code) == [.invalidKey])
        #expect(throws: DefaultsError.self) { try defaults.throwing.removeValues(withPrefix: "") }
        #expect(throws: DefaultsError.self) { try defaults.scoped("a.").throwing.removeValues(withPrefix: "") }
        #expect(Set(try provider.keys()) == ["a.1", "a.2", "b.1"])
        try defaults.scoped("a.").throwing.removeAll()
        #expect(try provider.keys() == ["b.1"])
    }

    @Test(arguments: [true, false]) func enumKeyNames(cached: Bool) throws {
        let (defaults, _, _) = makeDefaults(cached: cached)
        defaults.set("ada", forKey: SettingsKey.username)
        #expect(defaults.string(forKey: "username") == "ada")
        #expect(defaults.string(forKey: SettingsKey.username) == "ada")
        defaults[.theme] = .dark
        #expect(defaults.string(forKey: "ui.theme") == "dark")
    }
}

@Suite struct DefaultsTypedTests {
    @Test(arguments: [true, false]) func typedKeys(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults(cached: cached)
        #expect(defaults[.launchCount] == 0)
        defaults[.launchCount] += 1
        defaults[.launchCount] += 1
        #expect(defaults[.launchCount] == 2)
        #expect(try provider.value(forKey: "launchCount") == .int(2))
        #expect(defaults.hasValue(.launchCount))
        defaults.reset(.launchCount)
        #expect(!defaults.hasValue(.launchCount))
        #expect(defaults[.launchCount] == 0)

        defaults[.layout].columns = 4
        #expect(defaults[.layout] == Layout(columns: 4, sidebar: true))
        #expect(try provider.value(forKey: "layout") == .dictionary(["columns": .int(4), "sidebar": .bool(true)]))

        defaults[.recent] = [URL(string: "https://a.example")!]
        #expect(defaults[.recent] == [URL(string: "https://a.example")!])
        #expect(defaults.value([URL].self, forKey: "recent")?.count == 1)
        #expect(log.all.isEmpty)
    }

    @Test(arguments: [true, false]) func optionalKeysRemoveOnNil(cached: Bool) throws {
        let (defaults, provider, _) = makeDefaults(cached: cached)
        #expect(defaults[.nickname] == nil)
        defaults[.nickname] = "lovelace"
        #expect(defaults[.nickname] == "lovelace")
        defaults[.nickname] = nil
        #expect(try provider.value(forKey: "nickname") == nil)
        #expect(defaults[.fallbackName] == "guest")
        defaults[.fallbackName] = "x"
        defaults[.fallbackName] = nil
        #expect(defaults[.fallbackName] == "guest")
        defaults.set(Optional<Int>.none, forKey: "n")
        #expect(!defaults.hasValue(forKey: "n"))
    }

    @Test(arguments: [true, false]) func codableValues(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults(cached: cached)
        defaults.setCodable(sampleSettings, forKey: "settings")
        #expect(defaults.codable(Settings.self, forKey: "settings") == sampleSettings)
        let typed: Settings? = defaults.codable(forKey: "settings")
        #expect(typed == sampleSettings)
        guard case .dictionary? = try provider.value(forKey: "settings") else {
            Issue.record("not stored as a structured value"); return
        }
        defaults.setCodable(Optional<Settings>.none, forKey: "settings")
        #expect(!defaults.hasValue(forKey: "settings"))

        // Stored by another library as JSON data.
        try provider.setValue(.data(JSONEncoder().encode(sampleSettings)), forKey: "legacy")
        #expect(defaults.codable(Settings.self, forKey: "legacy", strategy: .jsonData) == sampleSettings)
        #expect(log.all.isEmpty)
    }

    @Test(arguments: [true, false]) func undecodableValueIsReportedAndKept(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults([
            "layout": .dictionary(["columns": .string("top-secret"), "sidebar": .bool(true)]),
            "small": .int(300),
        ], cached: cached)
        #expect(defaults[.layout] == Layout(columns: 2, sidebar: true))
        #expect(defaults[.small] == 1)
        let errors = log.all
        #expect(errors.map(\.code) == [.decodingFailed, .typeMismatch])
        #expect(errors.map(\.key) == ["layout", "small"])
        #expect(errors[0].message == "Cannot decode Layout at layout.columns: Expected Int, found a string.")
        #expect(errors[1].message == "Cannot read Int8 at small: the stored int does not fit in Int8.")
        #expect(errors.allSatisfy { !$0.description.contains("top-secret") })
        #expect(try provider.value(forKey: "layout") != nil)
        #expect(try provider.value(forKey: "small") == .int(300))
        #expect(defaults.codable(Layout.self, forKey: "layout") == nil)
    }

    @Test(arguments: [true, false]) func removeValuePolicyDeletesUndecodableValues(cached: Bool) throws {
        let (defaults, provider, log) = makeDefaults(["small": .int(300), "fine": .int(1)], cached: cached, policy: .removeValue)
        #expect(defaults[.small] == 1)
        #expect(try provider.value(forKey: "small") == nil)
        #expect(log.all.count == 1)
        #expect(defaults[.small] == 1)
        #expect(log.all.count == 1)
        #expect(try provider.value(forKey: "fine") == .int(1))
    }

    @Test(arguments: [true, false]) func throwingVariantsThrow(cached: Bool) throws {
        let (defaults, _, log) = makeDefaults(["small": .int(300)], cached: cached)
        let strict = defaults.throwing
        #expect { try strict.value(for: .small) } throws: { ($0 as? DefaultsError)?.code == .typeMismatch }
        #expect { try strict[.small] } throws: { ($0 as? DefaultsError)?.key == "small" }
        #expect { try strict.set(UInt64.max, forKey: "big") } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }
        #expect { try strict.set(1, forKey: "") } throws: { ($0 as? DefaultsError)?.code == .invalidKey }
        #expect(try strict.value(for: .volume) == 0.5)
        try strict.set(0.25, for: .volume)
        #expect(try strict.value(Double.self, forKey: "volume") == 0.25)
        let count: Int? = try strict.value(forKey: "missing")
        #expect(count == nil)
        #expect(log.all.isEmpty)
        // The non-throwing twin reports the invalid key instead.
        defaults.set(1, forKey: "")
        #expect(log.all.map(\.code) == [.invalidKey])
    }
}

@Suite struct DefaultsScopeTests {
    @Test(arguments: [true, false]) func scopedDefaultsPrefixKeys(cached: Bool) throws {
        let (defaults, provider, _) = makeDefaults(["other": 1], cached: cached)
        let ui = defaults.scoped("ui.")
        ui.set("dark", forKey: "theme")
        ui[.volume] = 0.3
        #expect(try provider.value(forKey: "ui.theme") == .string("dark"))
        #expect(try provider.value(forKey: "ui.volume") == .double(0.3))
        #expect(defaults[.volume] == 0.5)
        #expect(Set(ui.keys()) == ["theme", "volume"])

        let panel = ui.scoped("panel.")
        panel.set(true, forKey: "open")
        #expect(try provider.value(forKey: "ui.panel.open") == .bool(true))
        #expect(panel.prefix == "ui.panel.")

        ui.register(defaults: ["font": "mono"])
        #expect(ui.string(forKey: "font") == "mono")
        #expect(defaults.string(forKey: "ui.font") == "mono")
        #expect(defaults.string(forKey: "font") == nil)

        ui.removeAll()
        #expect(try provider.keys() == ["other"])
    }
}

/// Counts how often it is decoded, per tag, so that tests running at once count apart.
struct CountedLayout: Codable, Equatable, DefaultsCodable {
    private static let counts = Mutex<[String: Int]>([:])
    static func decodes(_ tag: String) -> Int { counts.withLock { $0[tag, default: 0] } }

    var tag: String
    var columns: Int

    init(tag: String = "", columns: Int) {
        self.tag = tag
        self.columns = columns
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tag = try container.decode(String.self, forKey: .tag)
        columns = try container.decode(Int.self, forKey: .columns)
        Self.counts.withLock { $0[tag, default: 0] += 1 }
    }
}

extension DefaultsKeys {
    static let counted = DefaultsKey<CountedLayout>("counted", default: CountedLayout(columns: 0))
}

@Suite struct DecodedValueCacheTests {
    @Test(arguments: [true, false]) func codableReadsDecodeOncePerChange(cached: Bool) throws {
        let (defaults, provider, _) = makeDefaults(cached: cached)
        let tag = UUID().uuidString
        let decodes = { CountedLayout.decodes(tag) }

        defaults[.counted] = CountedLayout(tag: tag, columns: 1)
        for _ in 0..<100 { #expect(defaults[.counted].columns == 1) }
        #expect(decodes() == 1)

        defaults[.counted] = CountedLayout(tag: tag, columns: 2)
        for _ in 0..<100 { #expect(defaults[.counted].columns == 2) }
        #expect(decodes() == 2)

        // A change made below the facade is seen at once.
        try provider.setValue(.dictionary(["tag": .string(tag), "columns": .int(3)]), forKey: "counted")
        #expect(defaults[.counted].columns == 3)
        #expect(decodes() == 3)

        // codable(forKey:) caches too, separately from the typed bridge.
        for _ in 0..<10 { #expect(defaults.codable(CountedLayout.self, forKey: "counted")?.columns == 3) }
        #expect(decodes() == 4)

        try provider.removeValue(forKey: "counted")
        #expect(defaults[.counted].columns == 0)
    }

    @Test(arguments: [true, false]) func concurrentReadersAndWritersSeeWholeValues(cached: Bool) async throws {
        let (defaults, _, log) = makeDefaults(cached: cached)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for i in 0..<200 { defaults[.layout] = Layout(columns: writer * 1000 + i, sidebar: i.isMultiple(of: 2)) }
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<200 {
                        let layout = defaults[.layout]
                        // Each written value pairs columns and sidebar; a torn read would not.
                        #expect(layout == Layout(columns: 2, sidebar: true) || (layout.columns % 1000).isMultiple(of: 2) == layout.sidebar)
                    }
                }
            }
        }
        #expect(log.all.isEmpty)
    }
}

/// A provider that changes without telling anyone: its writes send no events, as a store changed
/// by other means than its backend can detect.
final class SilentProvider: DefaultsProvider {
    let inner = MemoryProvider()
    var capabilities: DefaultsCapabilities { inner.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try inner.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try inner.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try inner.apply(changes) }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        DefaultsObservation {}
    }
}

@Suite struct DefaultsCacheTests {
    @Test func cachedByDefaultWithStatisticsPassedThrough() throws {
        let defaults = Defaults(MemoryProvider(["a": 1]))
        #expect(defaults.isCached)
        #expect(defaults.provider is CachingProvider<MemoryProvider>)
        #expect(defaults.integer(forKey: "a") == 1)
        #expect(defaults.integer(forKey: "a") == 1)
        defaults.set(1, forKey: "a")
        let statistics = try #require(defaults.statistics)
        #expect(statistics.misses == 1)
        #expect(statistics.hits == 1)
        #expect(statistics.skippedWrites == 1)
        defaults.resetStatistics()
        #expect(defaults.statistics == CacheStatistics())

        let plain = Defaults(MemoryProvider(), cached: false)
        #expect(!plain.isCached)
        #expect(plain.statistics == nil)
        #expect(plain.provider is MemoryProvider)
    }

    @Test func aCachedProviderIsNotWrappedAgain() {
        let cache = MemoryProvider().cached()
        #expect((Defaults(cache).provider as? CachingProvider<MemoryProvider>) === cache)
        // As the configuration registry hands it out: an existential.
        let opened: any DefaultsProvider = cache
        #expect((Defaults(opened).provider as? CachingProvider<MemoryProvider>) === cache)
    }

    @Test func invalidationReachesTheCache() throws {
        let silent = SilentProvider()
        let defaults = Defaults(silent)
        let ui = defaults.scoped("ui.")
        ui[.counted] = CountedLayout(columns: 1)
        ui[.volume] = 0.1
        #expect(ui[.counted].columns == 1)

        try silent.inner.setValue(.dictionary(["tag": "", "columns": .int(2)]), forKey: "ui.counted")
        try silent.inner.setValue(.double(0.2), forKey: "ui.volume")
        #expect(ui[.counted].columns == 1)      // not reported: the cache cannot know
        ui.invalidateCache(forKey: "counted")
        #expect(ui[.counted].columns == 2)
        #expect(ui[.volume] == 0.1)
        defaults.invalidateCache()
        #expect(ui[.volume] == 0.2)
    }
}
