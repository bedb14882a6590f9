import AnyDefaultsCore
import Foundation

/// The binary form of `array` and `dictionary` values in the `value` column: the shared
/// encoding of ``BinaryValueCodec`` (its table gives every tag; see also Docs/Backends.md,
/// "Storage format"), which the LMDB backend stores too.
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

    /// The bytes of `value`, tag included.
    static func encode(_ value: DefaultsValue) -> [UInt8] {
        BinaryValueCodec.encode(value)
    }

    /// The value held by `bytes`, which must be exactly one encoded value.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Damage) -> DefaultsValue {
        do {
            return try BinaryValueCodec.decode(bytes)
        } catch {
            throw Damage(reason: error.description)
        }
    }
}
