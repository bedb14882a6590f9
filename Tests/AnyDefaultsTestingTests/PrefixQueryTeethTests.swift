import AnyDefaultsCore
import AnyDefaultsMemory
import AnyDefaultsTesting
import Foundation
import Testing
import TestSupport

/// The prefix-query check must fail providers whose prefix queries are wrong in the ways an index
/// gets them wrong, and pass the in-memory provider.
@Suite(.ownThreads) struct PrefixQueryTeethTests {
    /// An in-memory provider with one defect in its prefix queries.
    final class BrokenPrefixProvider: DefaultsProvider {
        enum Defect: String, CaseIterable, Sendable {
            case graphemePrefix       // Swift's hasPrefix: whole characters, "x" misses "x\u{301}"
            case likeWildcards        // SQL LIKE 'prefix%' unescaped: "_" and "%" match any character
            case rawPrefixBytes       // the prefix not made canonical: an NFD prefix finds nothing
            case missesLongKeys       // the range over short keys only (LMDB without its buckets)
            case unsorted             // keys in the dictionary's order
        }

        let defect: Defect
        let store = MemoryProvider()

        init(_ defect: Defect) { self.defect = defect }

        var capabilities: DefaultsCapabilities { store.capabilities }
        func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try store.value(forKey: key) }
        func keys() throws(DefaultsError) -> [String] { try store.keys() }
        func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try store.apply(changes) }
        func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { store.observe(handler) }

        func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
            let matching = try store.keys().filter { matches($0, prefix) }
            return defect == .unsorted ? matching : DefaultsKeyPrefix.sorted(matching)
        }

        func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
            try store.allValues().filter { matches($0.key, prefix) }
        }

        private func matches(_ key: String, _ prefix: String) -> Bool {
            switch defect {
            case .graphemePrefix:
                return key.hasPrefix(prefix)
            case .likeWildcards:
                let pattern = "^" + prefix.map { $0 == "_" ? "." : $0 == "%" ? ".*" : NSRegularExpression.escapedPattern(for: String($0)) }.joined()
                return key.range(of: pattern, options: .regularExpression) != nil
            case .rawPrefixBytes:
                return key.utf8.starts(with: prefix.utf8)
            case .missesLongKeys:
                return key.utf8.count <= 511 && DefaultsKeyPrefix(prefix).contains(key)
            case .unsorted:
                return DefaultsKeyPrefix(prefix).contains(key)
            }
        }
    }

    @Test(arguments: BrokenPrefixProvider.Defect.allCases)
    func aWrongPrefixQueryFailsTheCheck(_ defect: BrokenPrefixProvider.Defect) throws {
        let suite = DefaultsConformanceSuite(capabilities: [.atomicBatch]) { _ in BrokenPrefixProvider(defect) }
        do {
            let report = try suite.prefixQueries()
            Issue.record("\(defect) passed \(report)")
        } catch let failure as ConformanceFailure {
            #expect(failure.items.contains { $0.id == .prefixQueriesKeys }, "\(failure)")
        }
    }

    @Test func theInMemoryProviderPassesAndSoDoesTheDefaultImplementation() throws {
        try DefaultsConformanceSuite(capabilities: [.atomicBatch]) { _ in MemoryProvider() }.prefixQueries()
        // A provider with only the required members gets the default prefix queries.
        final class Plain: DefaultsProvider {
            let store = MemoryProvider()
            var capabilities: DefaultsCapabilities { store.capabilities }
            func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try store.value(forKey: key) }
            func keys() throws(DefaultsError) -> [String] { try store.keys() }
            func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try store.apply(changes) }
            func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { store.observe(handler) }
        }
        try DefaultsConformanceSuite(capabilities: [.atomicBatch]) { _ in Plain() }.prefixQueries()
    }
}
