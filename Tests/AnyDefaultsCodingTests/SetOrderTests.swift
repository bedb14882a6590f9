import AnyDefaultsCore
import AnyDefaultsMemory
import Foundation
import Testing

private struct Tagged: Codable, Equatable, DefaultsCodable {
    var name: String
    var tags: Set<String>
}

/// Equal sets store equal values, whatever order they iterate in.
@Suite struct SetOrderTests {
    /// Two equal sets that iterate in different orders (a set's order depends on its capacity
    /// and insertion history).
    static func equalSetsInDifferentOrders() throws -> (Set<String>, Set<String>) {
        let words = (0..<40).map { "tag\($0)" }
        let plain = Set(words)
        for capacity in stride(from: 64, through: 4096, by: 64) {
            var other = Set<String>(minimumCapacity: capacity)
            for word in words.reversed() { other.insert(word) }
            if !Array(other).elementsEqual(Array(plain)) { return (plain, other) }
        }
        Issue.record("no two iteration orders found")
        return (plain, plain)
    }

    @Test func aSerializableSetStoresOneOrder() throws {
        let (a, b) = try Self.equalSetsInDifferentOrders()
        let stored = try a.defaultsValue
        #expect(stored == (try b.defaultsValue))
        guard case .array(let items) = stored else { Issue.record("not an array: \(stored)"); return }
        #expect(items == items.sorted { $0.storagePrecedes($1) })
        #expect(try Set<String>(defaultsValue: stored) == a)
    }

    @Test func aCodableSetStoresOneOrder() throws {
        let (a, b) = try Self.equalSetsInDifferentOrders()
        let encoder = DefaultsEncoder()
        let first = try encoder.encode(Tagged(name: "n", tags: a))
        #expect(first == (try encoder.encode(Tagged(name: "n", tags: b))))
        #expect(try encoder.encode(a) == (try encoder.encode(b)))
        #expect(try DefaultsDecoder().decode(Tagged.self, from: first) == Tagged(name: "n", tags: a))
        // An array keeps its own order.
        #expect(try encoder.encode(Array(a)) != (try encoder.encode(Array(b))))
    }

    @Test func rewritingAnEqualSetThroughTheCacheIsSkipped() throws {
        let (a, b) = try Self.equalSetsInDifferentOrders()
        let cache = MemoryProvider().cached()
        let defaults = Defaults(cache)
        let key = DefaultsKey<Tagged>("tagged", default: Tagged(name: "", tags: []))
        defaults[key] = Tagged(name: "n", tags: a)
        cache.resetStatistics()
        defaults[key] = Tagged(name: "n", tags: b)
        #expect(cache.statistics.skippedWrites == 1)
        #expect(cache.statistics.writes == 0)
    }

    @Test func theStorageOrderIsAStrictTotalOrderConsistentWithEquality() {
        let values: [DefaultsValue] = [
            .bool(false), .bool(true), .int(-1), .int(0), .int(7), .double(-0.0), .double(0.0), .double(.nan),
            .double(-.nan), .double(.infinity), .string(""), .string("a"), .string("é"), .string("e\u{301}"),
            .string("b"), .data(Data()), .data(Data([1])), .data(Data([0, 2])), .date(Date(timeIntervalSinceReferenceDate: 0)),
            .date(Date(timeIntervalSinceReferenceDate: -0.0)), .array([]), .array([.int(1)]), .array([.int(1), .int(0)]),
            .array([.string("a")]), .dictionary([:]), .dictionary(["a": .int(1)]), .dictionary(["a": .int(2)]),
            .dictionary(["b": .int(0)]), .dictionary(["a": .int(1), "b": .int(0)]),
        ]
        for x in values {
            #expect(!x.storagePrecedes(x), "\(x)")
            for y in values {
                let (before, after) = (x.storagePrecedes(y), y.storagePrecedes(x))
                if x == y {
                    #expect(!before && !after, "\(x) \(y)")
                } else {
                    #expect(before != after, "\(x) \(y): exactly one must come first")
                }
                for z in values where before && y.storagePrecedes(z) {
                    #expect(x.storagePrecedes(z), "\(x) \(y) \(z)")
                }
            }
        }
    }
}
