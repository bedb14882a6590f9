import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// The provider members a move relies on, on every built-in backend, plain and cached:
/// `removeValues(ifUnchanged:)` (compare and remove in one step) and `storeIdentity` (the same
/// store however it is reached), and `Defaults.migrate` built on them.
@Suite struct StoreIdentityAndRemovalTests {
    static let stores = DefaultsOnEveryBackendTests.stores
    static let variants = DefaultsOnEveryBackendTests.variants

    func withStore(_ template: String, _ body: (any DefaultsProvider, TemporaryDirectory, String) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let suite = "anydefaults-identity-\(UUID().uuidString)"
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            let text = template.replacingOccurrences(of: "{dir}", with: directory.path).replacingOccurrences(of: "{suite}", with: suite)
            try body(ProviderRegistry.standard.makeProvider(text), directory, text)
        }
    }

    /// A seeded reference model: random stores and random expectations (equal, changed, absent,
    /// of another type, NaN, equal after normalization); exactly the unchanged keys go.
    @Test(arguments: variants)
    func removesExactlyTheUnchangedKeys(store: String) throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let pool: [DefaultsValue] = [
            .int(1), .int(2), .double(1), .double(.nan), .double(-0.0), .double(0), .string("a"), .string("b"),
            .bool(true), .array([.int(1)]), .dictionary(["x": .int(1)]), .data(Data([1])), .date(Date(timeIntervalSinceReferenceDate: 1)),
        ]
        try withStore(store) { provider, _, _ in
            let events = Mutex<[DefaultsChangeEvent]>([])
            let observation = provider.observe { event in events.withLock { $0.append(event) } }
            defer { observation.cancel() }
            var model: [String: DefaultsValue] = [:]
            for round in 0..<6 {
                let keys = (0..<12).map { "k\(round).\($0)" } + ["caf\u{E9}.\(round)"]
                var written: [String: DefaultsValue] = [:]
                for key in keys where Bool.random(using: &random) { written[key] = pool.randomElement(using: &random)! }
                try provider.apply(written.map { .set($0.key, $0.value) })
                model.merge(written) { $1 }
                var expected: [String: DefaultsValue] = [:]
                var removable: [String] = []
                for key in keys where Bool.random(using: &random) {
                    let value: DefaultsValue = Bool.random(using: &random) ? model[key] ?? .int(99) : pool.randomElement(using: &random)!
                    // The NFD spelling of a key names the same key.
                    let spelled = key.hasPrefix("caf") ? key.decomposedStringWithCanonicalMapping : key
                    expected[spelled] = value
                    if model[key] == value { removable.append(key) }
                }
                events.withLock { $0.removeAll() }
                let removed = try provider.removeValues(ifUnchanged: expected)
                #expect(removed == removable.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }, "seed \(seed)")
                for key in removable { model.removeValue(forKey: key) }
                #expect(try provider.allValues() == model, "seed \(seed)")
                // One removal event per removed key.
                _ = waitUntil { events.withLock({ $0.count }) >= removable.count }
                #expect(Set(events.withLock { $0 }.filter { $0.newValue == nil }.map(\.key)) == Set(removable), "seed \(seed)")
            }
            #expect(try provider.removeValues(ifUnchanged: [:]) == [])
            #expect(throws: DefaultsError.self) { try provider.removeValues(ifUnchanged: ["": .int(1)]) }
        }
    }

    /// Two threads race to remove a key while a third keeps changing it. In commit order (the
    /// order of the change events), every removal follows the very value a remover expected and
    /// was told it removed: a removal never takes a value written after the comparison.
    @Test(arguments: stores)
    func aRemovalNeverTakesAValueItDidNotExpect(store: String) throws {
        try withStore(store + "?cache=off") { provider, _, _ in
            let events = Mutex<[DefaultsChangeEvent]>([])
            let observation = provider.observe { event in events.withLock { $0.append(event) } }
            defer { observation.cancel() }
            let removedValues = Mutex<[DefaultsValue]>([])
            let done = Atomic(false)
            try provider.setValue(.int(0), forKey: "shared")
            let writer = Thread {
                var next: Int64 = 0
                while !done.load(ordering: .relaxed) {
                    next += 1
                    try? provider.setValue(.int(next), forKey: "shared")
                    // Now and then a pause, so that removers find the value they read still there.
                    if next % 4 == 0 { usleep(50) }
                }
            }
            writer.start()
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let end = ContinuousClock.now + .milliseconds(store.hasPrefix("memory") ? 300 : 1_500)
                while ContinuousClock.now < end {
                    guard let seen = try? provider.value(forKey: "shared"),
                        let removed = try? provider.removeValues(ifUnchanged: ["shared": seen]), !removed.isEmpty
                    else { continue }
                    removedValues.withLock { $0.append(seen) }
                }
            }
            done.store(true, ordering: .relaxed)
            while !writer.isFinished { usleep(1_000) }
            let expectedRemovals = removedValues.withLock { $0.count }
            _ = waitUntil { events.withLock({ $0.filter { $0.newValue == nil }.count }) >= expectedRemovals }
            var unexplained = removedValues.withLock { $0 }
            var previous: DefaultsValue?
            var bad: [String] = []
            for event in events.withLock({ $0 }) where event.key == "shared" {
                if event.newValue == nil {
                    if let previous, let index = unexplained.firstIndex(of: previous) {
                        unexplained.remove(at: index)
                    } else {
                        bad.append("a removal after \(previous.map { "\($0)" } ?? "nothing") that no remover expected")
                    }
                }
                previous = event.newValue
            }
            print("\(store): \(removedValues.withLock { $0.count }) removals, \(events.withLock { $0.count }) events, \(bad.count) bad")
            #expect(bad.isEmpty, "\(bad.prefix(5))")
            #expect(unexplained.isEmpty, "removals reported but not seen: \(unexplained.count)")
        }
    }

    // MARK: Identity

    @Test(arguments: stores.filter { $0 != "memory:" })
    func twoProvidersOnOneStoreShareAnIdentity(store: String) throws {
        try withStore(store) { provider, directory, text in
            let first = try #require(provider.storeIdentity)
            var other = text
            if store.hasPrefix("json") || store.hasPrefix("sqlite") || store.hasPrefix("lmdb") {
                try FileManager.default.createSymbolicLink(atPath: directory.path("alias"), withDestinationPath: directory.path)
                other = text.replacingOccurrences(of: directory.path + "/", with: directory.path("alias") + "/./")
            }
            let second = try ProviderRegistry.standard.makeProvider(other + "?cache=on")
            try provider.setValue(.int(1), forKey: "k")
            #expect(first.overlaps(try #require(second.storeIdentity)))
            let configured = try ProviderRegistry.standard.storeIdentity(of: StoreConfiguration(parsing: other))
            #expect(first.overlaps(try #require(configured)))
            for file in first.files { #expect(first.contains(file: file)) }
            let elsewhere = try ProviderRegistry.standard.makeProvider(text.replacingOccurrences(of: "s.", with: "t.").replacingOccurrences(of: "/env", with: "/env2").replacingOccurrences(of: "anydefaults-identity-", with: "anydefaults-identity-other-"))
            #expect(!first.overlaps(try #require(elsewhere.storeIdentity)))
            #expect(!first.contains(file: directory.path("unrelated.json")))
        }
        #expect(try ProviderRegistry.standard.makeProvider("memory:").storeIdentity == nil)
        #expect(try ProviderRegistry.standard.storeIdentity(of: StoreConfiguration(parsing: "memory:")) == nil)
    }

    /// `Defaults.migrate` between two instances on one store (two spellings of its path) is a
    /// move within the store: the key is never lost by writing it and then removing it.
    @Test(arguments: stores.filter { !$0.hasPrefix("memory") && !$0.hasPrefix("userdefaults") })
    func migratingBetweenTwoNamesOfOneStoreKeepsTheValue(store: String) throws {
        try withStore(store) { provider, directory, text in
            try FileManager.default.createSymbolicLink(atPath: directory.path("alias"), withDestinationPath: directory.path)
            let other = try ProviderRegistry.standard.makeProvider(text.replacingOccurrences(of: directory.path + "/", with: directory.path("alias") + "/"))
            let source = Defaults(provider)
            let target = Defaults(other)
            try provider.setValue(.string("dark"), forKey: "theme")
            let key = DefaultsKey<String>("theme", default: "light")
            #expect(!source.migrate(key, to: key, in: target))
            #expect(try provider.value(forKey: "theme") == .string("dark"))
            // To another key of the same store: one batch, the value moves.
            #expect(source.migrate(key, to: DefaultsKey<String>("ui.theme", default: ""), in: target))
            #expect(try provider.allValues() == ["ui.theme": .string("dark")])
        }
    }
}
