import AnyDefaultsCore
import Synchronization
import Testing

@Suite struct ProviderRegistryTests {
    /// The configurations a factory was called with.
    final class Seen: Sendable {
        let list = Mutex<[StoreConfiguration]>([])
    }

    static func registry(seen: Seen = Seen()) -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.register(
            scheme: "file", summary: "a file", location: .path("PATH"),
            options: [StoreOption("durability", values: "normal|full", summary: "fsync policy")]
        ) { configuration in
            seen.list.withLock { $0.append(configuration) }
            return TestProvider()
        }
        registry.register(scheme: "mem", summary: "memory", location: .none) { _ in TestProvider() }
        registry.register(scheme: "named", summary: "named", location: .required("NAME")) { _ in TestProvider() }
        return registry
    }

    @Test func opensTheRegisteredBackendWithAResolvedPath() throws {
        let seen = Seen()
        let registry = Self.registry(seen: seen)
        _ = try registry.makeProvider("file:relative/p.db?durability=full")
        let configuration = try #require(seen.list.withLock { $0.first })
        #expect(configuration.location.hasPrefix("/"))
        #expect(configuration.location.hasSuffix("/relative/p.db"))
        #expect(configuration.options["durability"] == "full")
        #expect(registry.registered.map { $0.scheme } == ["file", "mem", "named"])
        #expect(registry.registered[0].usage == "file:PATH[?durability=normal|full&cache=on|off&journal=on|off&journalsize=bytes]")
    }

    @Test(arguments: [
        ("nope:", "Unknown scheme \"nope:\". Known: file:PATH"),
        ("mem:something", "takes no location"),
        ("file:", "needs a PATH"),
        ("named:", "needs a NAME"),
        ("file:/x?colour=red", "has no option \"colour\". Accepted: durability=normal|full, cache=on|off"),
    ])
    func rejectsBadConfigurationListingWhatIsAccepted(text: String, says: String) {
        let registry = Self.registry()
        do {
            _ = try registry.makeProvider(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains(says), "\(error.message)")
        }
    }

    /// A misspelt scheme gets the nearest registered one ("Did you mean sqlite:?"): one or two
    /// letters typed, missing, wrong or swapped, or a scheme it begins or that begins it; a scheme
    /// near none gets no guess.
    @Test(arguments: [
        ("sqlit", "sqlite"), ("sqlite3", "sqlite"), ("sqllite", "sqlite"), ("slqite", "sqlite"), ("SQLite3", "sqlite"),
        ("lmbd", "lmdb"), ("jsn", "json"), ("jsonfile", "json"), ("mem", "memory"), ("userdefault", "userdefaults"),
        ("user-defaults", "userdefaults"), ("postgress", "postgres"), ("postgre", "postgres"),
        ("nope", nil), ("redis", nil), ("psql", nil), ("xml", nil), ("js", nil), ("file", nil),
    ] as [(String, String?)])
    func aMisspeltSchemeGetsTheNearestAsASuggestion(typed: String, suggested: String?) {
        let registry = ProviderRegistry()
        for scheme in ["memory", "json", "sqlite", "lmdb", "userdefaults", "postgres", "postgresql"] {
            registry.register(scheme: scheme, summary: scheme, location: .optional("X")) { _ in TestProvider() }
        }
        do {
            _ = try registry.makeProvider("\(typed):x")
            Issue.record("\(typed): was accepted")
        } catch {
            #expect(error.code == .invalidConfiguration)
            if let suggested {
                #expect(error.message.contains("Unknown scheme \"\(typed.lowercased()):\". Did you mean \(suggested):? Known: "), "\(error.message)")
            } else {
                #expect(!error.message.contains("Did you mean"), "\(error.message)")
            }
        }
    }

    @Test func wrapsInTheCacheOnlyWhenAsked() throws {
        let registry = Self.registry()
        registry.setCacheWrapper { WrappedProvider(inner: $0) }
        #expect(try registry.makeProvider("mem:") is WrappedProvider)
        #expect(try registry.makeProvider("mem:?cache=off") is TestProvider)
    }
}

/// The smallest provider: nothing stored, every write accepted and dropped.
struct TestProvider: DefaultsProvider {
    var capabilities: DefaultsCapabilities { [] }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { nil }
    func keys() throws(DefaultsError) -> [String] { [] }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {}
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { DefaultsObservation {} }
}

struct WrappedProvider: DefaultsProvider {
    var inner: any DefaultsProvider
    var capabilities: DefaultsCapabilities { inner.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try inner.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try inner.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try inner.apply(changes) }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { inner.observe(handler) }
}
