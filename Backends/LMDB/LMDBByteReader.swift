/// Why bytes read from the store could not be decoded.
///
/// The provider turns it into a ``DefaultsError`` that names the key and the path; it never holds
/// the bytes themselves, which may be secrets.
package struct LMDBCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// The bytes are not a valid encoding: damaged, truncated, or not ours.
        case malformed
        /// The bytes start with a format version newer than this library knows.
        case unknownVersion
    }

    package var kind: Kind
    package var message: String
    /// Where in the bytes the problem was found.
    package var offset: Int

    package init(_ kind: Kind, _ message: String, at offset: Int) {
        self.kind = kind
        self.message = message
        self.offset = offset
    }

    package var description: String { "\(message) (at byte \(offset))" }
}

/// A bounds-checked cursor over untrusted bytes: every read checks what is left first, so no input
/// makes it read past the end. It reads a buffer it does not own: use it only while that buffer is
/// valid (inside the transaction or `withUnsafeBytes` call that provided it).
struct LMDBByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// How many bytes are left.
    var remaining: Int { bytes.count - offset }

    var isAtEnd: Bool { offset == bytes.count }

    func failure(_ message: String) -> LMDBCodecError {
        LMDBCodecError(.malformed, message, at: offset)
    }

    /// Moves back to `offset`, which must have been read already.
    mutating func rewind(to offset: Int) {
        self.offset = min(offset, self.offset)
    }

    mutating func readByte() throws(LMDBCodecError) -> UInt8 {
        guard offset < bytes.count else { throw failure("The data ends early.") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a format-version byte that must be `version`; a larger one means a newer format
    /// (``LMDBCodecError/Kind-swift.enum/unknownVersion``), a smaller one damage.
    mutating func readVersion(_ version: UInt8, of what: String) throws(LMDBCodecError) {
        let found = try readByte()
        guard found == version else {
            if found > version {
                throw LMDBCodecError(
                    .unknownVersion,
                    "The \(what) was written in format version \(found); this library reads version \(version).",
                    at: offset - 1)
            }
            throw LMDBCodecError(.malformed, "The \(what) has no valid format version.", at: offset - 1)
        }
    }

    /// Eight bytes, little-endian.
    mutating func readUInt64() throws(LMDBCodecError) -> UInt64 {
        guard remaining >= 8 else { throw failure("The data ends inside a fixed-size number.") }
        var value: UInt64 = 0
        for index in (0..<8).reversed() {
            value = value << 8 | UInt64(bytes[offset + index])
        }
        offset += 8
        return value
    }

    /// An unsigned LEB128 number in its shortest form (longer forms are rejected, so that every
    /// value has exactly one encoding).
    mutating func readVarUInt() throws(LMDBCodecError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var index = offset
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if shift == 63, byte > 1 { throw LMDBCodecError(.malformed, "A number is too large.", at: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if byte == 0, index - start > 1 {
                    throw LMDBCodecError(.malformed, "A number is not in its shortest form.", at: start)
                }
                offset = index
                return value
            }
            shift += 7
        }
        offset = index
        throw failure("The data ends early.")
    }

    /// A count of items, each of which takes at least `minimumItemSize` bytes, so that a count the
    /// remaining bytes cannot hold is rejected before anything is allocated for it.
    mutating func readCount(minimumItemSize: Int) throws(LMDBCodecError) -> Int {
        let start = offset
        let count = try readVarUInt()
        guard count <= UInt64(remaining / max(minimumItemSize, 1)) else {
            throw LMDBCodecError(.malformed, "A length or count exceeds the data.", at: start)
        }
        return Int(count)
    }

    /// The next `count` bytes; valid as long as the buffer this reader reads.
    mutating func readBytes(_ count: Int) throws(LMDBCodecError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw failure("The data ends early.") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is rejected rather than repaired.
    mutating func readString() throws(LMDBCodecError) -> String {
        let start = offset
        let count = try readCount(minimumItemSize: 1)
        let raw = try readBytes(count)
        guard let string = String(validating: raw.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw LMDBCodecError(.malformed, "A string is not valid UTF-8.", at: start)
        }
        return string
    }
}

/// Appends the encodings that ``LMDBByteReader`` reads.
extension Array where Element == UInt8 {
    mutating func appendUInt64(_ value: UInt64) {
        for index in 0..<8 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    mutating func appendVarUInt(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    mutating func appendLengthPrefixed(_ bytes: some Collection<UInt8>) {
        appendVarUInt(UInt64(bytes.count))
        append(contentsOf: bytes)
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes`, keeping the closure's typed error.
    func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try withUnsafeBytes { bytes in Result { () throws(E) -> T in try body(bytes) } }.get()
    }
}
