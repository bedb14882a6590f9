@testable import AnyDefaultsUserDefaults
import AnyDefaultsCore
import Foundation
import Testing

/// How numbers and other objects that plain Foundation code stores map to `DefaultsValue`.
@Suite struct PropertyListNodeTests {
    static func value(_ object: Any) -> DefaultsValue? {
        PropertyListNode(object: object)?.defaultsValue
    }

    @Test func booleansIntegersAndDoublesStayApart() {
        // Each of these converts to the others with `as?`; the mapping must not.
        #expect(Self.value(NSNumber(value: true)) == .bool(true))
        #expect(Self.value(NSNumber(value: false)) == .bool(false))
        #expect(Self.value(NSNumber(value: 1)) == .int(1))
        #expect(Self.value(NSNumber(value: 0)) == .int(0))
        #expect(Self.value(NSNumber(value: 1.0)) == .double(1))
        #expect(Self.value(NSNumber(value: Int8(1))) == .int(1))
        #expect(Self.value(NSNumber(value: UInt8(1))) == .int(1))
        #expect(Self.value(true) == .bool(true))
        #expect(Self.value(1) == .int(1))
        #expect(Self.value(1.0) == .double(1))
    }

    @Test func numbersKeepTheirExactValues() {
        #expect(Self.value(NSNumber(value: Int64.min)) == .int(.min))
        #expect(Self.value(NSNumber(value: Int64.max)) == .int(.max))
        #expect(Self.value(NSNumber(value: UInt64(Int64.max))) == .int(.max))
        #expect(Self.value(NSNumber(value: Float(1.5))) == .double(1.5))
        #expect(Self.value(NSNumber(value: Float(0.1))) == .double(Double(Float(0.1))))
        let negativeZero = Self.value(NSNumber(value: -0.0))
        #expect(negativeZero == .double(-0.0) && negativeZero != .double(0))
    }

    @Test func integersAboveInt64AreKeptButNotShown() {
        #expect(PropertyListNode(object: NSNumber(value: UInt64.max)) == .unsignedInteger(.max))
        #expect(Self.value(NSNumber(value: UInt64.max)) == nil)
        #expect(Self.value([NSNumber(value: UInt64.max)]) == nil)
        #expect(PropertyListNode.values(fromDomain: ["big": .unsignedInteger(.max), "ok": .integer(1), "": .integer(2)])
            == ["ok": .int(1)])
    }

    @Test func nonPropertyListObjectsAndExcessiveNestingAreRefused() {
        #expect(PropertyListNode(object: URL(fileURLWithPath: "/tmp")) == nil)
        var deep: Any = [Any]()
        for _ in 0..<DefaultsValue.maximumNestingDepth { deep = [deep] }
        #expect(PropertyListNode(object: deep) == nil)
    }

    @Test func everySampleSurvivesTheWriterAndBothReaders() throws {
        let data = BinaryPropertyListWriter.write(Samples.values.mapValues(PropertyListNode.init))
        // This package's reader.
        #expect(try BinaryPropertyListReader.read(Array(data)).defaultsValue == .dictionary(Samples.values))
        // Foundation's reader, which plain UserDefaults uses.
        let parsed = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        for (key, value) in Samples.values {
            #expect(PropertyListNode(object: parsed[key] as Any)?.defaultsValue == value, "\(key)")
        }
    }
}
