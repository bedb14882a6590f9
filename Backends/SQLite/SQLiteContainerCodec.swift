import AnyDefaultsCore
import Foundation

/// The compact binary form of `array` and `dictionary` values in the `value` column.
///
/// Every value is a tag byte and its payload (see Docs/Backends.md, "Storage format"):
///
/// | tag | case | payload |
/// | --- | --- | --- |
/// | 0, 1 | bool false, true | none |
/// | 2 | int | zigzag LEB128 varint |
/// | 3 | double | 8 bytes, IEEE 754 bit pattern, little-endian |
/// | 4 | string | varint byte count, UTF-8 |
/// | 5 | data | varint byte count, bytes |
/// | 6 | date | 8 bytes, bit pattern of `timeIntervalSinceReferenceDate`, little-endian |
/// | 7 | array | varint count, values |
/// | 8 | dictionary | varint count, then (varint byte count, UTF-8 key, value) sorted by key bytes |
///
/// Bit patterns make doubles and dates exact (`-0.0`, infinities, NaN); sorted keys make equal
/// dictionaries encode to equal bytes. Decoding checks every length against the bytes left, the
/// UTF-8 of every string, and the nesting depth, so a damaged blob is an error, never a crash.
enum SQLiteContainerCodec {
    /// Why a blob could not be decoded. The reason never contains stored bytes.
    struct Damage: Error, Sendable, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    private enum Tag: UInt8 {
        case falseValue = 0, trueValue, int, double, string, data, date, array, dictionary
    }

    /// The bytes of `value`, tag included.
    static func encode(_ value: DefaultsValue) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        append(value, to: &bytes)
        return bytes
    }

    /// The value held by `bytes`, which must be exactly one encoded value.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Damage) -> DefaultsValue {
        var reader = Reader(bytes: bytes)
        let value = try reader.value(depth: 0)
        guard reader.isAtEnd else { throw Damage(reason: "bytes follow the encoded value") }
        return value
    }

    // The depth is bounded by DefaultsValidation.checkValue before anything is encoded.
    private static func append(_ value: DefaultsValue, to bytes: inout [UInt8]) {
        switch value {
        case .bool(let flag):
            bytes.append(flag ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .int(let number):
            bytes.append(Tag.int.rawValue)
            appendVarint(UInt64(bitPattern: (number << 1) ^ (number >> 63)), to: &bytes)
        case .double(let number):
            bytes.append(Tag.double.rawValue)
            appendFixed(number.bitPattern, to: &bytes)
        case .string(let text):
            bytes.append(Tag.string.rawValue)
            appendCounted(text.utf8, to: &bytes)
        case .data(let data):
            bytes.append(Tag.data.rawValue)
            appendCounted(data, to: &bytes)
        case .date(let date):
            bytes.append(Tag.date.rawValue)
            appendFixed(date.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .array(let items):
            bytes.append(Tag.array.rawValue)
            appendVarint(UInt64(items.count), to: &bytes)
            for item in items { append(item, to: &bytes) }
        case .dictionary(let entries):
            bytes.append(Tag.dictionary.rawValue)
            appendVarint(UInt64(entries.count), to: &bytes)
            for (key, item) in entries.sorted(by: { $0.key.utf8Precedes($1.key) }) {
                appendCounted(key.utf8, to: &bytes)
                append(item, to: &bytes)
            }
        }
    }

    private static func appendVarint(_ number: UInt64, to bytes: inout [UInt8]) {
        var rest = number
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static func appendFixed(_ bits: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: bits.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendCounted(_ content: some Collection<UInt8>, to bytes: inout [UInt8]) {
        appendVarint(UInt64(content.count), to: &bytes)
        bytes.append(contentsOf: content)
    }

    /// Reads values from a blob, checking each step against the bytes that remain.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }
        private var remaining: Int { bytes.count - offset }

        mutating func value(depth: Int) throws(Damage) -> DefaultsValue {
            guard let tag = Tag(rawValue: try byte()) else { throw Damage(reason: "unknown value tag") }
            switch tag {
            case .falseValue: return .bool(false)
            case .trueValue: return .bool(true)
            case .int:
                let zigzag = try varint()
                return .int(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
            case .double: return .double(Double(bitPattern: try fixed()))
            case .string: return .string(try string())
            case .data: return .data(Data(try counted()))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed())))
            case .array:
                guard depth < DefaultsValue.maximumNestingDepth else { throw Damage(reason: "nested too deeply") }
                // Each item takes at least one byte, which bounds the count before allocating.
                let count = try count(minimumBytesEach: 1)
                var items: [DefaultsValue] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try value(depth: depth + 1)) }
                return .array(items)
            case .dictionary:
                guard depth < DefaultsValue.maximumNestingDepth else { throw Damage(reason: "nested too deeply") }
                let count = try count(minimumBytesEach: 2)
                var entries: [String: DefaultsValue] = Dictionary(minimumCapacity: count)
                for _ in 0..<count {
                    let key = try string()
                    guard entries.updateValue(try value(depth: depth + 1), forKey: key) == nil else {
                        throw Damage(reason: "a dictionary key appears twice")
                    }
                }
                return .dictionary(entries)
            }
        }

        private mutating func byte() throws(Damage) -> UInt8 {
            guard remaining >= 1 else { throw Damage(reason: "the value ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        private mutating func varint() throws(Damage) -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                guard shift < 64, shift < 63 || next <= 1 else { throw Damage(reason: "a number is too long") }
                result |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return result }
                shift += 7
            }
        }

        private mutating func fixed() throws(Damage) -> UInt64 {
            guard remaining >= 8 else { throw Damage(reason: "the value ends early") }
            defer { offset += 8 }
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }

        private mutating func count(minimumBytesEach: Int) throws(Damage) -> Int {
            let count = try varint()
            guard count <= UInt64(remaining / minimumBytesEach) else {
                throw Damage(reason: "a count exceeds the bytes that remain")
            }
            return Int(count)
        }

        private mutating func counted() throws(Damage) -> UnsafeRawBufferPointer {
            let length = try count(minimumBytesEach: 1)
            defer { offset += length }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        }

        private mutating func string() throws(Damage) -> String {
            let content = try counted()
            guard let text = String(validating: content.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
                throw Damage(reason: "a string is not valid UTF-8")
            }
            return text
        }
    }
}
