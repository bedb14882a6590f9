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
}
