/// A bounds-checked cursor over untrusted bytes: every read checks what is left first, so no input
/// makes it read past the end. It reads a buffer it does not own: use it only while that buffer is
/// valid (inside the transaction or `withUnsafeBytes` call that provided it).
package struct BinaryByteReader {
    private let bytes: UnsafeRawBufferPointer
    package private(set) var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// How many bytes are left.
    package var remaining: Int { bytes.count - offset }

    package var isAtEnd: Bool { offset == bytes.count }

    package func failure(_ message: String) -> BinaryCodecError {
        BinaryCodecError(.malformed, message, at: offset)
    }

    /// Moves back to `offset`, which must have been read already.
    package mutating func rewind(to offset: Int) {
        self.offset = min(offset, self.offset)
    }

    package mutating func readByte() throws(BinaryCodecError) -> UInt8 {
        guard offset < bytes.count else { throw failure("The data ends early.") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a format-version byte that must be `version`; a larger one means a newer format
    /// (``BinaryCodecError/Kind-swift.enum/unknownVersion``), a smaller one damage.
    package mutating func readVersion(_ version: UInt8, of what: String) throws(BinaryCodecError) {
        let found = try readByte()
        guard found == version else {
            if found > version {
                throw BinaryCodecError(
                    .unknownVersion,
                    "The \(what) was written in format version \(found); this library reads version \(version).",
                    at: offset - 1)
            }
            throw BinaryCodecError(.malformed, "The \(what) has no valid format version.", at: offset - 1)
        }
    }

    /// Eight bytes, little-endian.
    package mutating func readUInt64() throws(BinaryCodecError) -> UInt64 {
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
    package mutating func readVarUInt() throws(BinaryCodecError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var index = offset
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if shift == 63, byte > 1 { throw BinaryCodecError(.malformed, "A number is too large.", at: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if byte == 0, index - start > 1 {
                    throw BinaryCodecError(.malformed, "A number is not in its shortest form.", at: start)
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
    package mutating func readCount(minimumItemSize: Int) throws(BinaryCodecError) -> Int {
        let start = offset
        let count = try readVarUInt()
        guard count <= UInt64(remaining / max(minimumItemSize, 1)) else {
            throw BinaryCodecError(.malformed, "A length or count exceeds the data.", at: start)
        }
        return Int(count)
    }

    /// The next `count` bytes; valid as long as the buffer this reader reads.
    package mutating func readBytes(_ count: Int) throws(BinaryCodecError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw failure("The data ends early.") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is rejected rather than repaired.
    package mutating func readString() throws(BinaryCodecError) -> String {
        let start = offset
        let count = try readCount(minimumItemSize: 1)
        let raw = try readBytes(count)
        guard let string = String(validating: raw.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw BinaryCodecError(.malformed, "A string is not valid UTF-8.", at: start)
        }
        return string
    }
}

/// Appends the encodings that ``BinaryByteReader`` reads.
// Inlinable: the backends append these per record, from another module.
extension Array where Element == UInt8 {
    @inlinable
    package mutating func appendUInt64(_ value: UInt64) {
        for index in 0..<8 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    @inlinable
    package mutating func appendVarUInt(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    @inlinable
    package mutating func appendLengthPrefixed(_ bytes: some Collection<UInt8>) {
        appendVarUInt(UInt64(bytes.count))
        append(contentsOf: bytes)
    }
}

package extension Array where Element == UInt8 {
    /// `withUnsafeBytes`, keeping the closure's typed error. Inlinable, so that the backends
    /// calling it get it specialized rather than instantiating `Result`'s metadata per call.
    @inlinable
    func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try withUnsafeBytes { bytes in Result { () throws(E) -> T in try body(bytes) } }.get()
    }
}

package extension String {
    /// The string's UTF-8 bytes, read in place where the string stores them contiguously (a
    /// native Swift string), else from a copy; keeping the closure's typed error. (LMDB's read
    /// path spells this out with a closure that returns plain values: through `Result` a read
    /// costs about 20 instructions more.)
    @inlinable
    func withUTF8Bytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        let result = utf8.withContiguousStorageIfAvailable { bytes in
            Result { () throws(E) -> T in try body(UnsafeRawBufferPointer(bytes)) }
        }
        return try (result ?? Array(utf8).withUnsafeBytes { bytes in Result { () throws(E) -> T in try body(bytes) } }).get()
    }
}
