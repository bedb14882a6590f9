import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// Prefix queries (issue 27.3) on every backend, plain and cached, against a reference model:
/// a key is under a prefix when its NFC form starts with the prefix's NFC form, scalar by scalar.
@Suite struct PrefixQueryTests {
    /// Keys that make a prefix query go wrong if it is not exact: wildcards of SQL, glob and
    /// regular expressions, NFC and NFD, partial graphemes, high scalars, NUL, long keys sharing
    /// more than LMDB's 256 prefix bytes, and neighbours in byte order.
    static let keys: [String] = {
        let long = String(repeating: "L", count: 300)
        var keys = [
            "a", "a/", "a/b", "a/b/c", "a/bc", "a0", "a%b", "a_b", "a*b", "a?b", "a[b]", "a\\b", "ab", "b", "%", "_",
            "caf\u{E9}/x", "cafe\u{301}/y", "cafe/z", "caf/w", "x\u{301}", "x", "xy", "\u{1F1EB}\u{1F1F7}flag", "\u{1F1EB}alone",
            "\u{10FFFF}", "\u{10FFFF}\u{10FFFF}z", "\u{FFFF}", "\u{FFFD}k", "\u{7F}", "nul\u{0}key", "nul", "日本/設定", "日本語",
            long + "/one", long + "/two", long + "x", String(repeating: "é", count: 400), String(repeating: "e\u{301}", count: 300) + "z",
        ]
        var generator = SeededGenerator(seed: seed)
        let alphabet: [String] = ["a", "b", "/", "%", "_", "é", "e\u{301}", "\u{301}", "日", "\u{10FFFF}", "\u{0}", "*"]
        for _ in 0..<60 {
            keys.append((0..<Int.random(in: 1...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined())
        }
        return keys
    }()

    static let seed: UInt64 = {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("PrefixQueryTests seed \(seed)")
        return seed
    }()

    static let prefixes: [String] = [
        "", "a", "a/", "a/b", "a/b/c", "a/b/c/d", "a%", "a_", "a*", "a?", "a[", "%", "_", "*", "?", "[",
        "caf\u{E9}", "cafe\u{301}", "cafe", "caf", "x", "x\u{301}", "\u{1F1EB}", "\u{1F1EB}\u{1F1F7}", "\u{10FFFF}", "\u{10FFFF}\u{10FFFF}",
        "\u{FFFF}", "nul\u{0}", "日本", "日本/", String(repeating: "L", count: 100), String(repeating: "L", count: 300),
        String(repeating: "L", count: 300) + "/", String(repeating: "é", count: 300), String(repeating: "e\u{301}", count: 300),
        "\u{301}", "never",
    ]

    /// The reference: NFC scalars of the key start with the NFC scalars of the prefix.
    static func isUnder(_ key: String, _ prefix: String) -> Bool {
        Array(key.precomposedStringWithCanonicalMapping.unicodeScalars)
            .starts(with: prefix.precomposedStringWithCanonicalMapping.unicodeScalars)
    }

    static func byteOrder(_ keys: [String]) -> [String] {
        keys.map { $0.precomposedStringWithCanonicalMapping }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    @Test(arguments: EveryBackend.variants)
    func keysAndValuesUnderAPrefixAreExactlyTheModels(store: String) throws {
        try EveryBackend.with(store) { open in
            let provider = try open()
            var model: [String: DefaultsValue] = [:]
            for (index, key) in Self.keys.enumerated() {
                let canonical = key.precomposedStringWithCanonicalMapping
                guard model[canonical] == nil else { continue }
                model[canonical] = .int(Int64(index))
            }
            try provider.apply(model.map { .set($0.key, $0.value) })
            for prefix in Self.prefixes {
                let expected = Self.byteOrder(model.keys.filter { Self.isUnder($0, prefix) })
                #expect(try provider.keys(withPrefix: prefix) == expected, "prefix \(prefix.debugDescription)")
                let values = try provider.allValues(withPrefix: prefix)
                #expect(values == model.filter { Self.isUnder($0.key, prefix) }, "prefix \(prefix.debugDescription)")
            }
            #expect(try provider.keys(withPrefix: "").count == model.count)
        }
    }

    @Test(arguments: EveryBackend.variants)
    func scopedViewsListSnapshotAndRemoveTheirPrefixOnly(store: String) throws {
        try EveryBackend.with(store) { open in
            let defaults = Defaults(try open(), cached: false)
            let acme = defaults.scoped("tenant/acme/")
            let acmeCorp = defaults.scoped("tenant/acme-corp/")
            acme.set("gold", forKey: "plan")
            acme.set(10, forKey: "limits/seats")
            acme.set(true, forKey: "caf\u{E9}")
            acmeCorp.set("free", forKey: "plan")
            defaults.set(1, forKey: "tenant/acme")  // the prefix without its slash: not in the scope
            #expect(Set(acme.keys()) == ["plan", "limits/seats", "caf\u{E9}"])
            #expect(acme.keys(withPrefix: "limits/") == ["limits/seats"])
            #expect(acme.snapshot().values == ["plan": "gold", "limits/seats": 10, "caf\u{E9}": true])
            #expect(defaults.snapshot(withPrefix: "tenant/acme-").values == ["tenant/acme-corp/plan": "free"])
            acme.removeValues(withPrefix: "limits/")
            #expect(Set(acme.keys()) == ["plan", "caf\u{E9}"])
            acme.removeAll()
            #expect(acme.keys().isEmpty)
            #expect(Set(defaults.keys()) == ["tenant/acme-corp/plan", "tenant/acme"])
        }
    }

    /// The cache answers prefix queries from its upstream's index, and a scoped view asks for its
    /// prefix: neither lists every key of the store.
    @Test func prefixQueriesNeverListTheWholeStore() throws {
        let spy = KeyListingSpy(MemoryProvider())
        let defaults = Defaults(spy)
        defaults.set(1, forKey: "t/a")
        defaults.set(2, forKey: "u/b")
        let scoped = defaults.scoped("t/")
        #expect(scoped.keys() == ["a"])
        #expect(scoped.snapshot().values == ["a": 1])
        scoped.removeAll()
        #expect(defaults.keys(withPrefix: "u") == ["u/b"])
        #expect(spy.fullListings.load(ordering: .relaxed) == 0)
    }
}

/// A provider that counts the calls that list every key.
final class KeyListingSpy: DefaultsProvider {
    let upstream: MemoryProvider
    let fullListings = Atomic<Int>(0)

    init(_ upstream: MemoryProvider) { self.upstream = upstream }

    var capabilities: DefaultsCapabilities { upstream.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try upstream.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] {
        fullListings.add(1, ordering: .relaxed)
        return try upstream.keys()
    }
    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        fullListings.add(1, ordering: .relaxed)
        return try upstream.allValues()
    }
    func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] { try upstream.keys(withPrefix: prefix) }
    func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] { try upstream.allValues(withPrefix: prefix) }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try upstream.apply(changes) }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { upstream.observe(handler) }
}
