@testable import AnyDefaultsUserDefaults
import AnyDefaultsCore
import Foundation
import Testing

/// The binary property-list writer keeps look-alike values apart and writes what Foundation reads.
@Suite struct BinaryPropertyListWriterTests {
    static func foundationRead(_ data: Data) throws -> [String: Any] {
        try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    @Test func lookAlikeValuesAreNotMerged() throws {
        // Foundation's encoders share one object between values that compare equal.
        let nodes: [String: PropertyListNode] = [
            "zero": .real(0), "negativeZero": .real(-0.0), "dateZero": .date(Date(timeIntervalSinceReferenceDate: 0)),
            "dateNegativeZero": .date(Date(timeIntervalSinceReferenceDate: -0.0)),
            "composed": .string("caf\u{E9}"), "decomposed": .string("cafe\u{301}"),
            "one": .integer(1), "oneReal": .real(1), "yes": .bool(true),
        ]
        let data = BinaryPropertyListWriter.write(nodes)
        let read = try BinaryPropertyListReader.read(Array(data))
        #expect(read.defaultsValue == PropertyListNode.dictionary(nodes).defaultsValue)
        guard case .dictionary(let entries) = read else { Issue.record("not a dictionary"); return }
        #expect(entries["negativeZero"].map { if case .real(let value) = $0 { value.sign == .minus } else { false } } == true)
        #expect(entries["decomposed"].map { if case .string(let text) = $0 { Array(text.unicodeScalars).count == 5 } else { false } } == true)

        let foundation = try Self.foundationRead(data)
        #expect((foundation["negativeZero"] as? NSNumber)?.doubleValue.sign == .minus)
        #expect((foundation["zero"] as? NSNumber)?.doubleValue.sign == .plus)
        #expect((foundation["decomposed"] as? String)?.unicodeScalars.count == 5)
    }

    @Test func sizesBeyondTheSmallEncodingsReadBack() throws {
        // Over 255 and over 65,535 objects (wider references), long strings and data, wide integers.
        let many = (0..<70_000).map { PropertyListNode.integer(Int64($0)) }
        let nodes: [String: PropertyListNode] = [
            "many": .array(many),
            "long": .string(String(repeating: "é", count: 300)),
            "bytes": .data(Data(repeating: 7, count: 70_000)),
            "integers": .array([.integer(255), .integer(256), .integer(65_535), .integer(65_536), .integer(1 << 32),
                                .integer(-1), .integer(.min), .integer(.max), .unsignedInteger(.max)]),
        ]
        let data = BinaryPropertyListWriter.write(nodes)
        #expect(try BinaryPropertyListReader.read(Array(data)) == .dictionary(nodes))
        let foundation = try Self.foundationRead(data)
        #expect((foundation["many"] as? [Any])?.count == 70_000)
        #expect((foundation["integers"] as? [Any]).map { $0.compactMap { ($0 as? NSNumber)?.int64Value } }?.prefix(8)
            == [255, 256, 65_535, 65_536, 1 << 32, -1, .min, .max])
    }
}
