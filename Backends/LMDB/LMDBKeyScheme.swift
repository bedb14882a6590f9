import AnyDefaultsCore

/// How defaults keys map to LMDB keys, including keys longer than LMDB accepts.
///
/// LMDB keys are at most 511 bytes. The scheme, which Docs/Backends.md also describes:
///
/// - A **short key** (at most ``directKeyLimit`` bytes of UTF-8) is stored under its UTF-8 bytes,
///   with its value record (``LMDBValueCodec``) as the data.
/// - A **long key** is stored under a derived key: the byte `0xFF`, the first
///   ``longKeyPrefixLength`` bytes of its UTF-8, and a 64-bit FNV-1a hash of all of it. The data
///   is a *bucket* holding the full key with its value record, so keys whose derived keys collide
///   share the bucket and stay distinct: reads match the full key, and ``LMDBProvider/keys()``
///   returns the full keys exactly.
/// - Keys starting with `0xFE` are the store's own metadata (the format marker, and from format 2
///   the change log and the watchers' leases).
///
/// `0xFE` and `0xFF` never occur in UTF-8, so the three kinds cannot be confused with one another.
package struct LMDBKeyScheme: Sendable {
    /// The longest UTF-8 key stored under its own bytes: LMDB's default maximum key size, which a
    /// store requires of the library that opens it.
    package static let directKeyLimit = 511
    /// How many leading bytes of a long key its derived key keeps.
    static let longKeyPrefixLength = 256

    static let longKeyMarker: UInt8 = 0xFF
    static let metadataMarker: UInt8 = 0xFE
    /// The key of the format marker record, which says this LMDB database is an AnyDefaults store.
    static let formatMarkerKey: [UInt8] = [metadataMarker] + Array("anydefaults.format".utf8)
    /// The version of the key scheme and record layout, kept in the format marker. Version 2 adds
    /// the change log and the watchers' leases (metadata records, ``LMDBChangeLog``); a version-1
    /// store is brought to version 2 when opened (only its marker changes).
    static let storeFormatVersion: UInt8 = 2
    /// The oldest format this library opens (and brings up to ``storeFormatVersion``).
    static let oldestStoreFormatVersion: UInt8 = 1

    /// A hash every long key gets instead of its own, for tests that force collisions.
    let fixedHash: UInt64?

    /// The scheme every store uses.
    package static let standard = LMDBKeyScheme(fixedHash: nil)

    init(fixedHash: UInt64?) {
        self.fixedHash = fixedHash
    }

    /// Whether a key with `utf8Count` bytes is stored under a derived key.
    static func isLong(utf8Count: Int) -> Bool { utf8Count > directKeyLimit }

    /// The derived LMDB key of a long key.
    func derivedKey(_ utf8: UnsafeRawBufferPointer) -> [UInt8] {
        var key: [UInt8] = [Self.longKeyMarker]
        key.reserveCapacity(1 + Self.longKeyPrefixLength + 8)
        key.append(contentsOf: utf8.prefix(Self.longKeyPrefixLength))
        let digest = fixedHash ?? Self.fnv1a(utf8)
        // Big-endian, so that derived keys sort by prefix and then by hash.
        for index in (0..<8).reversed() { key.append(UInt8(truncatingIfNeeded: digest >> (8 * UInt64(index)))) }
        return key
    }

    /// The 64-bit FNV-1a hash: stable across processes, platforms and versions (unlike `Hasher`).
    static func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// The data stored under a long key's derived key: every long key that derives it, each with its
/// value record.
///
/// Layout: a version byte (1), a LEB128 entry count (at least 1), then per entry the key
/// (LEB128 length, UTF-8) and its value record (LEB128 length, an ``LMDBValueCodec`` record).
package struct LMDBLongKeyBucket: Sendable, Equatable {
    static let version: UInt8 = 1

    package var entries: [(key: String, record: [UInt8])]

    package init(entries: [(key: String, record: [UInt8])] = []) {
        self.entries = entries
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.key == $1.key && $0.record == $1.record }
    }

    /// The index of the entry for `key`.
    func index(of key: String) -> Int? {
        entries.firstIndex { $0.key == key }
    }

    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = [Self.version]
        bytes.appendVarUInt(UInt64(entries.count))
        for entry in entries {
            bytes.appendLengthPrefixed(entry.key.utf8)
            bytes.appendLengthPrefixed(entry.record)
        }
        return bytes
    }

    /// Decodes a bucket, checking that every key in it is long and derives `derivedKey` under
    /// `scheme`, so that a damaged bucket cannot report keys that are not stored there.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, derivedKey: UnsafeRawBufferPointer, scheme: LMDBKeyScheme
    ) throws(BinaryCodecError) -> LMDBLongKeyBucket {
        var reader = BinaryByteReader(bytes)
        try reader.readVersion(version, of: "long-key record")
        // An entry takes at least a key length, a long key, a record length and a record.
        let count = try reader.readCount(minimumItemSize: LMDBKeyScheme.directKeyLimit + 4)
        guard count > 0 else { throw reader.failure("The long-key record is empty.") }
        var bucket = LMDBLongKeyBucket()
        for _ in 0..<count {
            let keyOffset = reader.offset
            let key = try reader.readString()
            let utf8 = Array(key.utf8)
            let derives = LMDBKeyScheme.isLong(utf8Count: utf8.count)
                && utf8.withUnsafeBytes { scheme.derivedKey($0) }.elementsEqual(derivedKey)
            guard derives else {
                throw BinaryCodecError(.malformed, "The long-key record holds a key that does not belong to it.", at: keyOffset)
            }
            guard bucket.index(of: key) == nil else {
                throw BinaryCodecError(.malformed, "The long-key record holds the same key twice.", at: keyOffset)
            }
            let recordLength = try reader.readCount(minimumItemSize: 1)
            let record = try reader.readBytes(recordLength)
            bucket.entries.append((key, Array(record)))
        }
        guard reader.isAtEnd else { throw reader.failure("Unexpected bytes follow the long-key record.") }
        return bucket
    }
}
