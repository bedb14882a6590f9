import AnyDefaultsCore
import Foundation
import Testing

@testable import AnyDefaultsSQLite

@Suite struct SQLiteContainerCodecTests {
    private func decode(_ bytes: [UInt8]) throws -> DefaultsValue {
        try bytes.withUnsafeBytes { try SQLiteContainerCodec.decode($0) }
    }

    @Test func everyEdgeValueRoundTrips() throws {
        for (key, value) in edgeValues where key != "data.large" {
            #expect(try decode(SQLiteContainerCodec.encode(value)) == value, "\(key)")
        }
        let nan = try decode(SQLiteContainerCodec.encode(.array([.double(-0.0)])))
        #expect(nan == .array([.double(-0.0)]))
        #expect(nan != .array([.double(0.0)]))
    }

    @Test func theDeepestAcceptedNestingRoundTripsAndDeeperIsDamage() throws {
        var value = DefaultsValue.array([])
        for _ in 1..<DefaultsValue.maximumNestingDepth { value = .array([value]) }
        #expect(value.nestingDepth == DefaultsValue.maximumNestingDepth)
        #expect(try decode(SQLiteContainerCodec.encode(value)) == value)

        // 513 arrays, each holding the next: one level more than accepted.
        let tooDeep = Array([[UInt8]](repeating: [7, 1], count: DefaultsValue.maximumNestingDepth).joined()) + [7, 0]
        #expect(throws: SQLiteContainerCodec.Damage.self) { try decode(tooDeep) }
    }

    @Test func damagedBytesAreErrorsNotCrashes() throws {
        let sample = SQLiteContainerCodec.encode(edgeValues["dictionary.everything"] ?? .array([]))
        for length in 0..<sample.count {
            #expect(throws: SQLiteContainerCodec.Damage.self) { try decode(Array(sample.prefix(length))) }
        }
        #expect(throws: SQLiteContainerCodec.Damage.self) { try decode(sample + [0]) }
        let cases: [[UInt8]] = [
            [9],  // unknown tag
            [7, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],  // a count far beyond the bytes
            [2] + [UInt8](repeating: 0xFF, count: 11),  // an overlong varint
            [4, 1, 0xFF],  // invalid UTF-8
            [8, 2, 1, 0x61, 0, 1, 0x61, 1],  // a key twice
        ]
        for bytes in cases {
            #expect(throws: SQLiteContainerCodec.Damage.self, "\(bytes)") { try decode(bytes) }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? decode(bytes)
        }
    }
}
