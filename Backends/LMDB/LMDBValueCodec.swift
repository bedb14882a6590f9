import AnyDefaultsCore
import Foundation

/// The record the LMDB backend stores for a value: one format-version byte (currently 1)
/// followed by the value in the shared binary encoding (``BinaryValueCodec``, whose table gives
/// every tag).
///
/// Bad bytes give an ``BinaryCodecError``; a version byte above ours is
/// ``BinaryCodecError/Kind-swift.enum/unknownVersion``.
package enum LMDBValueCodec {
    /// The format version this library writes and reads.
    package static let version: UInt8 = 1

    typealias Tag = BinaryValueCodec.Tag

    /// The record for `value`: the version byte and the encoded value.
    package static func encode(_ value: DefaultsValue) -> [UInt8] {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(16)
        BinaryValueCodec.append(value, to: &bytes)
        return bytes
    }

    /// Decodes a whole record: the version byte, one value, and nothing after it.
    package static func decode(_ record: UnsafeRawBufferPointer) throws(BinaryCodecError) -> DefaultsValue {
        if let value = decodeFixedScalar(record) { return value }
        var reader = BinaryByteReader(record)
        try reader.readVersion(version, of: "value")
        let value = try BinaryValueCodec.decodeValue(&reader)
        guard reader.isAtEnd else { throw reader.failure("Unexpected bytes follow the value.") }
        return value
    }

    /// The fast path for the commonest records, a bool, a double, a date or a small int, read
    /// straight from the bytes; `nil` for anything else (including anything malformed), which the
    /// general decoder then handles.
    @inline(__always)
    private static func decodeFixedScalar(_ record: UnsafeRawBufferPointer) -> DefaultsValue? {
        guard record.count >= 2, record[0] == version else { return nil }
        switch (Tag(rawValue: record[1]), record.count) {
        case (.false?, 2): return .bool(false)
        case (.true?, 2): return .bool(true)
        case (.double?, 10):
            return .double(Double(bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt64.self))))
        case (.date?, 10):
            let bits = UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
        case (.int?, 3) where record[2] < 0x80:
            return .int(BinaryValueCodec.unzigzag(UInt64(record[2])))
        case (.int?, 4) where record[2] >= 0x80 && record[3] > 0 && record[3] < 0x80:
            return .int(BinaryValueCodec.unzigzag(UInt64(record[2] & 0x7F) | UInt64(record[3]) << 7))
        default:
            return nil
        }
    }

    /// Decodes a record held in `bytes`.
    package static func decode(_ bytes: [UInt8]) throws(BinaryCodecError) -> DefaultsValue {
        try bytes.withBytes { raw throws(BinaryCodecError) in try decode(raw) }
    }
}
