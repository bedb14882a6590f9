/// Why bytes read from a store could not be decoded (``BinaryValueCodec`` and the records around
/// it).
///
/// A provider turns it into a ``DefaultsError`` that names the key and the path; it never holds
/// the bytes themselves, which may be secrets.
package struct BinaryCodecError: Error, Sendable, Hashable, CustomStringConvertible {
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
