import AnyDefaultsCore
import Foundation
import TestSupport
import Testing

/// The public face of the binary encoding, for provider authors: the same bytes as the built-in
/// backends store (pinned in `BinaryValueCodecTests`), errors as `DefaultsError`.
@Suite struct ExactBinaryTests {
    @Test func theBytesAreTheStoredFormat() throws {
        let value = DefaultsValue.dictionary(["b": .array([.int(-1), .bool(true)]), "a": .string("x"), "é": .double(-0.0)])
        let expected: [UInt8] =
            [0x08, 3, 1, 0x61, 0x04, 1, 0x78, 1, 0x62, 0x07, 2, 0x02, 0x01, 0x01, 2, 0xC3, 0xA9, 0x03]
            + [0, 0, 0, 0, 0, 0, 0, 0x80]
        #expect(ExactBinary.bytes(from: value) == expected)
        #expect(try ExactBinary.value(from: expected) == value)
        #expect(try ExactBinary.value(from: Data(expected)) == value)
    }

    /// Generated values of every shape read back exactly, and equal values have equal bytes.
    @Test func generatedValuesRoundTrip() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("ExactBinaryTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, using: &random)
            let bytes = ExactBinary.bytes(from: value)
            #expect(try ExactBinary.value(from: bytes) == value, "seed \(seed)")
            #expect(ExactBinary.bytes(from: try ExactBinary.value(from: bytes)) == bytes, "seed \(seed)")
        }
    }

    @Test func damagedBytesAreACorruptedErrorThatShowsNoBytes() {
        let secret: [UInt8] = [0x04, 20] + Array("secret-value".utf8)      // 20 bytes announced, 12 there
        do {
            _ = try ExactBinary.value(from: secret)
            Issue.record("truncated bytes were read")
        } catch {
            #expect(error.code == .corrupted)
            #expect(error.description.contains("byte"))
            #expect(!error.description.contains("secret"))
        }
        for bytes: [UInt8] in [[], [0x09], [0x01, 0x01], [0x02, 0x80, 0x00]] {
            #expect(throws: DefaultsError.self) { try ExactBinary.value(from: bytes) }
        }
    }

    static func randomValue(depth: Int, using random: inout SeededGenerator) -> DefaultsValue {
        switch Int.random(in: 0..<(depth < 3 ? 9 : 7), using: &random) {
        case 0: return .bool(Bool.random(using: &random))
        case 1: return .int(Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0...63, using: &random))
        case 2: return .double(Double(bitPattern: random.next()))
        case 3: return .string(String((0..<Int.random(in: 0...8, using: &random)).map { _ in
            Character(Unicode.Scalar(UInt32.random(in: 0x20...0x2FF, using: &random))!) }))
        case 4: return .data(Data((0..<Int.random(in: 0...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: random.next())))
        case 6: return .string("")
        case 7: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var items: [String: DefaultsValue] = [:]
            for index in 0..<Int.random(in: 0...4, using: &random) { items["k\(index)\(Int.random(in: 0...9, using: &random))"] = randomValue(depth: depth + 1, using: &random) }
            return .dictionary(items)
        }
    }
}
