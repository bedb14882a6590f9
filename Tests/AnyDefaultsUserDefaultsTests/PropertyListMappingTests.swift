@testable import AnyDefaultsUserDefaults
import AnyDefaultsCore
import Foundation
import Testing

/// How numbers and other objects that plain Foundation code stores map to `DefaultsValue`.
@Suite struct PropertyListMappingTests {
    @Test func booleansIntegersAndDoublesStayApart() {
        // Each of these converts to the others with `as?`; the mapping must not.
        #expect(PropertyListMapping.value(from: NSNumber(value: true)) == .bool(true))
        #expect(PropertyListMapping.value(from: NSNumber(value: false)) == .bool(false))
        #expect(PropertyListMapping.value(from: NSNumber(value: 1)) == .int(1))
        #expect(PropertyListMapping.value(from: NSNumber(value: 0)) == .int(0))
        #expect(PropertyListMapping.value(from: NSNumber(value: 1.0)) == .double(1))
        #expect(PropertyListMapping.value(from: NSNumber(value: Int8(1))) == .int(1))
        #expect(PropertyListMapping.value(from: NSNumber(value: UInt8(1))) == .int(1))
        #expect(PropertyListMapping.value(from: true) == .bool(true))
        #expect(PropertyListMapping.value(from: 1) == .int(1))
        #expect(PropertyListMapping.value(from: 1.0) == .double(1))
    }

    @Test func numbersKeepTheirExactValues() {
        #expect(PropertyListMapping.value(from: NSNumber(value: Int64.min)) == .int(.min))
        #expect(PropertyListMapping.value(from: NSNumber(value: Int64.max)) == .int(.max))
        #expect(PropertyListMapping.value(from: NSNumber(value: UInt64(Int64.max))) == .int(.max))
        #expect(PropertyListMapping.value(from: NSNumber(value: Float(1.5))) == .double(1.5))
        #expect(PropertyListMapping.value(from: NSNumber(value: Float(0.1))) == .double(Double(Float(0.1))))
        let negativeZero = PropertyListMapping.value(from: NSNumber(value: -0.0))
        #expect(negativeZero == .double(-0.0) && negativeZero != .double(0))
    }

    @Test func valuesBeyondDefaultsValueAreNotRepresented() {
        #expect(PropertyListMapping.value(from: NSNumber(value: UInt64.max)) == nil)
        #expect(PropertyListMapping.value(from: [NSNumber(value: UInt64.max)]) == nil)
        #expect(PropertyListMapping.value(from: URL(fileURLWithPath: "/tmp")) == nil)
        var deep: Any = [Any]()
        for _ in 0..<DefaultsValue.maximumNestingDepth { deep = [deep] }
        #expect(PropertyListMapping.value(from: deep) == nil)
    }

    @Test func everySampleSurvivesAPropertyListRoundTrip() throws {
        for (key, value) in Samples.values {
            let object = PropertyListMapping.object(for: value)
            let data = try PropertyListSerialization.data(fromPropertyList: ["k": object], format: .binary, options: 0)
            let parsed = try #require(
                try PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any])
            #expect(PropertyListMapping.value(from: parsed["k"] as Any) == value, "\(key)")
        }
    }
}
