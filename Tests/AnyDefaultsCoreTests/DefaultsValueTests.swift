import AnyDefaultsCore
import Foundation
import Testing

@Suite struct DefaultsValueTests {
    @Test func casesNeverEqualAcrossTypes() {
        #expect(DefaultsValue.int(1) != .double(1))
        #expect(DefaultsValue.int(1) != .bool(true))
        #expect(DefaultsValue.double(1) != .bool(true))
        #expect(DefaultsValue.double(0) != .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(DefaultsValue.string("") != .data(Data()))
        #expect(DefaultsValue.array([]) != .dictionary([:]))
    }

    @Test func doublesCompareByBitsAndNaNEqualsNaN() {
        #expect(DefaultsValue.double(-0.0) != .double(0.0))
        #expect(DefaultsValue.double(.nan) == .double(.nan))
        #expect(DefaultsValue.double(.nan) == .double(Double(nan: 0x1234, signaling: false)))
        #expect(DefaultsValue.date(Date(timeIntervalSinceReferenceDate: -0.0)) != .date(Date(timeIntervalSinceReferenceDate: 0.0)))
        #expect(DefaultsValue.double(.infinity) == .double(.infinity))
        #expect(DefaultsValue.double(.infinity) != .double(-.infinity))
    }

    @Test func hashIsConsistentWithEquality() {
        let set: Set<DefaultsValue> = [.double(.nan), .double(Double(nan: 7, signaling: false)), .double(0), .double(-0.0)]
        #expect(set.count == 3)
        let nested: Set<DefaultsValue> = [.array([.double(.nan)]), .array([.double(.nan)])]
        #expect(nested.count == 1)
    }

    @Test func nestingDepthHandlesDeepValuesWithoutRecursion() {
        #expect(DefaultsValue.int(1).nestingDepth == 0)
        #expect(DefaultsValue.array([]).nestingDepth == 1)
        #expect(DefaultsValue.dictionary(["a": .array([.int(1)])]).nestingDepth == 2)
        var deep = DefaultsValue.int(0)
        for _ in 0..<10_000 { deep = .array([deep]) }
        #expect(deep.nestingDepth == 10_000)
    }

    /// A store keeps the spelling written, so canonically equivalent strings are different values
    /// (the conformance suite's roundTrips.string and changeEvents.change; SQLite, the cache and
    /// the memory store skipped such a write as "unchanged" and kept the old spelling).
    @Test func stringsAndDictionaryKeysCompareByTheirScalars() {
        #expect(DefaultsValue.string("caf\u{E9}") != .string("cafe\u{301}"))
        #expect(DefaultsValue.string("\u{212A}") != .string("K"))
        #expect(DefaultsValue.string("caf\u{E9}") == .string("caf\u{E9}"))
        #expect(DefaultsValue.array([.string("e\u{301}")]) != .array([.string("\u{E9}")]))
        #expect(DefaultsValue.dictionary(["caf\u{E9}": .int(1)]) != .dictionary(["cafe\u{301}": .int(1)]))
        #expect(DefaultsValue.dictionary(["caf\u{E9}": .int(1), "x": .string("y")]) == .dictionary(["x": .string("y"), "caf\u{E9}": .int(1)]))
        // Hashing stays consistent: equal values hash alike (differently spelled ones may collide).
        let set: Set<DefaultsValue> = [.string("caf\u{E9}"), .string("cafe\u{301}"), .string("caf\u{E9}")]
        #expect(set.count == 2)
    }
}
