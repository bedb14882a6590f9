import Foundation

/// The exact binary encoding of a ``DefaultsValue``: the bytes the SQLite backend stores for arrays
/// and dictionaries, and the LMDB backend for every value (after a format-version byte of its
/// own). A provider that keeps values as bytes can store these and read back every value bit for
/// bit, as the built-in backends do.
///
/// ```swift
/// let bytes = ExactBinary.bytes(from: .array([.int(1), .double(-0.0)]))
/// let value = try ExactBinary.value(from: bytes)       // .array([.int(1), .double(-0.0)])
/// ```
///
/// The format is stable: stores written with it are read by every later version. One tag byte,
/// then the payload:
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
/// Doubles and dates keep their exact bits (`-0.0`, the infinities, NaN payloads). Dictionary
/// entries are written in ascending order of their keys' UTF-8 bytes, so equal values encode to
/// equal bytes. LEB128 numbers are in their shortest form.
///
/// Reading trusts nothing: truncated or damaged bytes, a number not in its shortest form, a
/// string that is not UTF-8, a dictionary key written twice, bytes after the value, or nesting
/// deeper than ``DefaultsValue/maximumNestingDepth`` give an error, never a crash.
public enum ExactBinary {
    static let backend = "ExactBinary"

    /// The bytes of `value`. Check the nesting depth first (a provider validates its batches with
    /// ``DefaultsValidation``): a value nested deeper than ``DefaultsValue/maximumNestingDepth``
    /// encodes, but is rejected when read.
    public static func bytes(from value: DefaultsValue) -> [UInt8] {
        BinaryValueCodec.encode(value)
    }

    /// Reads the one value `bytes` hold.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/corrupted`` naming the offset of the problem
    ///   (never the bytes, which may be secrets).
    public static func value(from bytes: some ContiguousBytes) throws(DefaultsError) -> DefaultsValue {
        let decoded: Result<DefaultsValue, BinaryCodecError> = bytes.withUnsafeBytes { buffer in
            do throws(BinaryCodecError) {
                return .success(try BinaryValueCodec.decode(buffer))
            } catch {
                return .failure(error)
            }
        }
        switch decoded {
        case .success(let value):
            return value
        case .failure(let error):
            throw DefaultsError(.corrupted, "The bytes are not an exact binary value: \(error).", backend: backend, cause: error)
        }
    }
}
