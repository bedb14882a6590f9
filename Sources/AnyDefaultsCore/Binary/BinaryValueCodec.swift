import Foundation

/// The compact binary encoding of a ``DefaultsValue`` that the SQLite backend (for arrays and
/// dictionaries) and the LMDB backend (for every value, after a format-version byte) store.
///
/// | tag  | value            | payload                                                        |
/// |------|------------------|----------------------------------------------------------------|
/// | 0x00 | `.bool(false)`   | none                                                           |
/// | 0x01 | `.bool(true)`    | none                                                           |
/// | 0x02 | `.int`           | zigzag LEB128 (1 to 10 bytes)                                  |
/// | 0x03 | `.double`        | the IEEE 754 bit pattern, 8 bytes little-endian                |
/// | 0x04 | `.string`        | LEB128 byte count, then UTF-8                                  |
/// | 0x05 | `.data`          | LEB128 byte count, then the bytes                              |
/// | 0x06 | `.date`          | bit pattern of `timeIntervalSinceReferenceDate`, 8 bytes LE    |
/// | 0x07 | `.array`         | LEB128 item count, then each item                              |
/// | 0x08 | `.dictionary`    | LEB128 entry count, then per entry a string key and a value    |
///
/// Doubles and dates keep their exact bits (so `-0.0`, the infinities and NaN payloads survive).
/// Dictionary entries are written in ascending order of their keys' UTF-8 bytes, so equal values
/// encode to equal bytes. LEB128 numbers must be in their shortest form.
///
/// Decoding trusts nothing: every read is bounds-checked, counts are checked against the bytes
/// left before anything is allocated, nesting deeper than ``DefaultsValue/maximumNestingDepth`` is
/// rejected, a dictionary key written twice is rejected, and neither direction recurses, so no
/// input can exhaust the stack, read out of bounds or crash. Bad bytes give a
/// ``BinaryCodecError``.
package enum BinaryValueCodec {
    package enum Tag: UInt8 {
        case `false` = 0x00, `true`, int, double, string, data, date, array, dictionary
    }

    // MARK: Encoding

    /// The bytes of `value`.
    ///
    /// `value` must nest no deeper than ``DefaultsValue/maximumNestingDepth`` (providers check
    /// this first); deeper values encode too, but are rejected when decoded.
    package static func encode(_ value: DefaultsValue) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        append(value, to: &bytes)
        return bytes
    }

    private enum Pending {
        case value(DefaultsValue)
        case key(String)
    }

    /// Appends the bytes of `value`, in pre-order with an explicit stack instead of recursion.
    package static func append(_ value: DefaultsValue, to bytes: inout [UInt8]) {
        // Most values are scalars, which need no stack (and so no allocation).
        if appendScalar(value, to: &bytes) { return }
        var pending: [Pending] = [.value(value)]
        while let next = pending.popLast() {
            switch next {
            case .key(let key):
                bytes.appendLengthPrefixed(key.utf8)
            case .value(let value):
                if appendScalar(value, to: &bytes) { continue }
                switch value {
                case .array(let items):
                    bytes.append(Tag.array.rawValue)
                    bytes.appendVarUInt(UInt64(items.count))
                    pending.append(contentsOf: items.reversed().lazy.map { .value($0) })
                case .dictionary(let items):
                    bytes.append(Tag.dictionary.rawValue)
                    bytes.appendVarUInt(UInt64(items.count))
                    // Pushed in reverse: the stack pops the smallest key first.
                    for (key, item) in items.sorted(by: { $1.key.utf8Precedes($0.key) }) {
                        pending.append(.value(item))
                        pending.append(.key(key))
                    }
                case .bool, .int, .double, .string, .data, .date:
                    break
                }
            }
        }
    }

    /// Appends `value` if it is not a container; whether it did.
    private static func appendScalar(_ value: DefaultsValue, to bytes: inout [UInt8]) -> Bool {
        switch value {
        case .bool(let flag):
            bytes.append(flag ? Tag.true.rawValue : Tag.false.rawValue)
        case .int(let number):
            bytes.append(Tag.int.rawValue)
            bytes.appendVarUInt(zigzag(number))
        case .double(let number):
            bytes.append(Tag.double.rawValue)
            bytes.appendUInt64(number.bitPattern)
        case .string(let string):
            bytes.append(Tag.string.rawValue)
            bytes.appendLengthPrefixed(string.utf8)
        case .data(let data):
            bytes.append(Tag.data.rawValue)
            bytes.appendLengthPrefixed(data)
        case .date(let date):
            bytes.append(Tag.date.rawValue)
            bytes.appendUInt64(date.timeIntervalSinceReferenceDate.bitPattern)
        case .array, .dictionary:
            return false
        }
        return true
    }

    // MARK: Decoding

    /// Decodes `bytes`, which must hold exactly one value.
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(BinaryCodecError) -> DefaultsValue {
        var reader = BinaryByteReader(bytes)
        let value = try decodeValue(&reader)
        guard reader.isAtEnd else { throw reader.failure("Unexpected bytes follow the value.") }
        return value
    }

    /// Zigzag encoding: small magnitudes of either sign become small unsigned numbers, which take
    /// few LEB128 bytes.
    @inline(__always)
    package static func zigzag(_ number: Int64) -> UInt64 {
        UInt64(bitPattern: (number << 1) ^ (number >> 63))
    }

    @inline(__always)
    package static func unzigzag(_ zigzag: UInt64) -> Int64 {
        Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
    }

    /// A container being filled while its items are decoded. Its items are kept apart, on a
    /// stack of arrays or of dictionaries, so that adding one mutates them in place: items kept in
    /// an enum's payload are copied on every append, which made decoding quadratic in the count.
    private struct Frame {
        var isDictionary: Bool
        var remaining: Int
        /// The key of the dictionary entry being decoded.
        var key: String
    }

    /// The smallest encoding of an array item (a tag) and of a dictionary entry (an empty key's
    /// length byte and a tag), to bound counts by the bytes left.
    private static let minimumItemSize = 1
    private static let minimumEntrySize = 2
    /// Space reserved up front for a container, whatever count the (untrusted) data claims.
    private static let reservationLimit = 1024

    /// Decodes one value with an explicit stack of open containers instead of recursion.
    package static func decodeValue(_ reader: inout BinaryByteReader) throws(BinaryCodecError) -> DefaultsValue {
        // Most values are scalars, which need no stack.
        let tagOffset = reader.offset
        guard let tag = Tag(rawValue: try reader.readByte()) else {
            throw BinaryCodecError(.malformed, "Unknown value tag.", at: tagOffset)
        }
        if let scalar = try decodeScalar(tag, &reader) { return scalar }
        reader.rewind(to: tagOffset)
        return try decodeNested(&reader)
    }

    /// The payload of a value that is not a container; `nil` for a container's tag.
    private static func decodeScalar(_ tag: Tag, _ reader: inout BinaryByteReader) throws(BinaryCodecError) -> DefaultsValue? {
        switch tag {
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int:
            return .int(unzigzag(try reader.readVarUInt()))
        case .double: return .double(Double(bitPattern: try reader.readUInt64()))
        case .string: return .string(try reader.readString())
        case .data:
            let count = try reader.readCount(minimumItemSize: 1)
            return .data(Data(try reader.readBytes(count)))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.readUInt64())))
        case .array, .dictionary: return nil
        }
    }

    private static func decodeNested(_ reader: inout BinaryByteReader) throws(BinaryCodecError) -> DefaultsValue {
        var open: [Frame] = []
        var arrays: [[DefaultsValue]] = []
        var dictionaries: [[String: DefaultsValue]] = []
        while true {
            let entryKey: String? = open.last?.isDictionary == true ? try reader.readString() : nil
            let tagOffset = reader.offset
            var value: DefaultsValue
            switch Tag(rawValue: try reader.readByte()) {
            case .array:
                guard open.count < DefaultsValue.maximumNestingDepth else { throw tooDeep(at: tagOffset) }
                let count = try reader.readCount(minimumItemSize: minimumItemSize)
                if count == 0 {
                    value = .array([])
                } else {
                    try setKey(entryKey, of: &open, in: dictionaries, at: tagOffset)
                    var items: [DefaultsValue] = []
                    items.reserveCapacity(min(count, reservationLimit))
                    arrays.append(items)
                    open.append(Frame(isDictionary: false, remaining: count, key: ""))
                    continue
                }
            case .dictionary:
                guard open.count < DefaultsValue.maximumNestingDepth else { throw tooDeep(at: tagOffset) }
                let count = try reader.readCount(minimumItemSize: minimumEntrySize)
                if count == 0 {
                    value = .dictionary([:])
                } else {
                    try setKey(entryKey, of: &open, in: dictionaries, at: tagOffset)
                    var items: [String: DefaultsValue] = [:]
                    items.reserveCapacity(min(count, reservationLimit))
                    dictionaries.append(items)
                    open.append(Frame(isDictionary: true, remaining: count, key: ""))
                    continue
                }
            case let tag?:
                guard let scalar = try decodeScalar(tag, &reader) else { throw BinaryCodecError(.malformed, "Unknown value tag.", at: tagOffset) }
                value = scalar
            case nil:
                throw BinaryCodecError(.malformed, "Unknown value tag.", at: tagOffset)
            }
            try setKey(entryKey, of: &open, in: dictionaries, at: tagOffset)

            // Add the finished value to its container; a container that is now full is itself a
            // finished value for the one around it.
            while true {
                guard let top = open.last else { return value }
                if top.isDictionary {
                    dictionaries[dictionaries.count - 1][top.key] = value
                } else {
                    arrays[arrays.count - 1].append(value)
                }
                if top.remaining > 1 {
                    open[open.count - 1].remaining -= 1
                    break
                }
                open.removeLast()
                value = top.isDictionary ? .dictionary(dictionaries.removeLast()) : .array(arrays.removeLast())
            }
        }
    }

    /// Records the key just read for the dictionary on top of `open`, rejecting a repeated key
    /// (which this encoder never writes, and which would silently drop a value).
    private static func setKey(
        _ key: String?, of open: inout [Frame], in dictionaries: [[String: DefaultsValue]], at offset: Int
    ) throws(BinaryCodecError) {
        guard let key, open.last?.isDictionary == true else { return }
        guard dictionaries[dictionaries.count - 1][key] == nil else {
            throw BinaryCodecError(.malformed, "A dictionary holds the same key twice.", at: offset)
        }
        open[open.count - 1].key = key
    }

    private static func tooDeep(at offset: Int) -> BinaryCodecError {
        BinaryCodecError(
            .malformed, "The value nests deeper than \(DefaultsValue.maximumNestingDepth) levels.", at: offset)
    }
}
