import AnyDefaultsCore

/// Values by defaults key, on top of LMDB records, following ``LMDBKeyScheme``.
extension LMDBTransaction {
    /// The value stored under the canonical key `key`.
    func value(forKey key: String, scheme: LMDBKeyScheme) throws(DefaultsError) -> DefaultsValue? {
        if LMDBKeyScheme.isLong(utf8Count: key.utf8.count) {
            let derived = Array(key.utf8).withUnsafeBytes { scheme.derivedKey($0) }
            guard let bucket = try bucket(derived, for: key, scheme: scheme),
                let index = bucket.index(of: key)
            else { return nil }
            return try decode(bucket.entries[index].record, key: key)
        }
        guard let record = try get(utf8Of: key) else { return nil }
        return try decode(record, key: key)
    }

    /// Applies one change with a canonical key; returns whether the stored value changed (a value
    /// equal to the stored one is not written).
    func apply(_ change: LMDBPreparedChange, scheme: LMDBKeyScheme) throws(DefaultsError) -> Bool {
        let key = change.key
        return try key.withUTF8Bytes { utf8 throws(DefaultsError) -> Bool in
            if LMDBKeyScheme.isLong(utf8Count: utf8.count) {
                return try applyLong(change, utf8: utf8, scheme: scheme)
            }
            guard let record = change.record else { return try delete(utf8, for: key) }
            if let stored = try get(utf8, for: key), Self.holds(stored, change) { return false }
            try record.withBytes { bytes throws(DefaultsError) in try put(utf8, bytes, for: key) }
            return true
        }
    }

    private func applyLong(
        _ change: LMDBPreparedChange, utf8: UnsafeRawBufferPointer, scheme: LMDBKeyScheme
    ) throws(DefaultsError) -> Bool {
        let key = change.key
        let derived = scheme.derivedKey(utf8)
        // A bucket that cannot be read is replaced, as an unreadable short-key record would be.
        let stored = try? bucket(derived, for: key, scheme: scheme)
        var bucket = stored ?? LMDBLongKeyBucket()
        let index = bucket.index(of: key)
        switch (change.record, index) {
        case (nil, nil):
            return false
        case (nil, let index?):
            bucket.entries.remove(at: index)
        case (let record?, let index?):
            let unchanged = bucket.entries[index].record.withBytes { Self.holds($0, change) }
            if unchanged { return false }
            bucket.entries[index].record = record
        case (let record?, nil):
            bucket.entries.append((key, record))
        }
        try derived.withBytes { derived throws(DefaultsError) in
            if bucket.entries.isEmpty {
                _ = try delete(derived, for: key)
            } else {
                try bucket.encoded().withBytes { bytes throws(DefaultsError) in try put(derived, bytes, for: key) }
            }
        }
        return true
    }

    /// Whether the stored record already holds the change's value: the same bytes, or bytes that
    /// decode to an equal value (a NaN with another payload, say).
    private static func holds(_ stored: UnsafeRawBufferPointer, _ change: LMDBPreparedChange) -> Bool {
        guard let record = change.record, let value = change.value else { return false }
        if record.withUnsafeBytes({ $0.elementsEqual(stored) }) { return true }
        return (try? LMDBValueCodec.decode(stored)) == value
    }

    /// The long-key bucket stored under `derived`, if any.
    private func bucket(
        _ derived: [UInt8], for key: String, scheme: LMDBKeyScheme
    ) throws(DefaultsError) -> LMDBLongKeyBucket? {
        try derived.withBytes { derived throws(DefaultsError) -> LMDBLongKeyBucket? in
            guard let bytes = try get(derived, for: key) else { return nil }
            do throws(BinaryCodecError) {
                return try LMDBLongKeyBucket.decode(bytes, derivedKey: derived, scheme: scheme)
            } catch {
                throw DefaultsError.undecodable(error, key: key, path: path)
            }
        }
    }

    private func decode(_ record: [UInt8], key: String) throws(DefaultsError) -> DefaultsValue {
        try record.withBytes { record throws(DefaultsError) in try decode(record, key: key) }
    }

    private func decode(_ record: UnsafeRawBufferPointer, key: String) throws(DefaultsError) -> DefaultsValue {
        do throws(BinaryCodecError) {
            return try LMDBValueCodec.decode(record)
        } catch {
            throw DefaultsError.undecodable(error, key: key, path: path)
        }
    }

    // MARK: Whole store

    /// Calls `body` with every stored key and the undecoded record of its value.
    func forEachEntry(
        scheme: LMDBKeyScheme, _ body: (String, UnsafeRawBufferPointer) throws(DefaultsError) -> Void
    ) throws(DefaultsError) {
        try forEach { rawKey, data throws(DefaultsError) in
            switch rawKey.first {
            case LMDBKeyScheme.metadataMarker:
                return
            case LMDBKeyScheme.longKeyMarker:
                let bucket: LMDBLongKeyBucket
                do throws(BinaryCodecError) {
                    bucket = try LMDBLongKeyBucket.decode(data, derivedKey: rawKey, scheme: scheme)
                } catch {
                    throw DefaultsError.undecodable(error, key: nil, path: path)
                }
                for entry in bucket.entries {
                    try entry.record.withBytes { record throws(DefaultsError) in try body(entry.key, record) }
                }
            default:
                guard let key = String(validating: rawKey.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
                    throw DefaultsError(
                        .corrupted, "The store holds a key that is not valid UTF-8.",
                        backend: LMDBProvider.backend, path: path)
                }
                try body(key, data)
            }
        }
    }

    /// Calls `body` with every stored key under `prefix`, the undecoded record of its value and
    /// whether it is a long key, reading only two ranges of records: the short keys from the
    /// prefix's bytes on, and the long-key buckets whose derived key starts with the marker and
    /// the prefix's first ``LMDBKeyScheme/longKeyPrefixLength`` bytes (every long key under the
    /// prefix derives such a key; the buckets' full keys are then matched against the whole
    /// prefix). Short keys come in UTF-8 order, then long keys.
    func forEachEntry(
        withPrefix prefix: DefaultsKeyPrefix, scheme: LMDBKeyScheme,
        _ body: (String, UnsafeRawBufferPointer, _ isLong: Bool) throws(DefaultsError) -> Void
    ) throws(DefaultsError) {
        let bytes = Array(prefix.canonical.utf8)
        // A short key is at most 511 bytes, so no short key is under a longer prefix.
        if bytes.count <= LMDBKeyScheme.directKeyLimit {
            try forEach(from: bytes) { rawKey, data throws(DefaultsError) -> Bool in
                guard let first = rawKey.first, first < LMDBKeyScheme.metadataMarker, rawKey.starts(with: bytes) else { return false }
                guard let key = String(validating: rawKey.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
                    throw DefaultsError(
                        .corrupted, "The store holds a key that is not valid UTF-8.", backend: LMDBProvider.backend, path: path)
                }
                try body(key, data, false)
                return true
            }
        }
        let derivedStart = [LMDBKeyScheme.longKeyMarker] + bytes.prefix(LMDBKeyScheme.longKeyPrefixLength)
        try forEach(from: derivedStart) { rawKey, data throws(DefaultsError) -> Bool in
            guard rawKey.starts(with: derivedStart) else { return false }
            let bucket: LMDBLongKeyBucket
            do throws(BinaryCodecError) {
                bucket = try LMDBLongKeyBucket.decode(data, derivedKey: rawKey, scheme: scheme)
            } catch {
                throw DefaultsError.undecodable(error, key: nil, path: path)
            }
            for entry in bucket.entries where prefix.containsCanonical(entry.key) {
                try entry.record.withBytes { record throws(DefaultsError) in try body(entry.key, record, true) }
            }
            return true
        }
    }

    /// The stored keys under `prefix`, in UTF-8 order.
    func keys(withPrefix prefix: DefaultsKeyPrefix, scheme: LMDBKeyScheme) throws(DefaultsError) -> [String] {
        var keys: [String] = []
        var hasLongKeys = false
        try forEachEntry(withPrefix: prefix, scheme: scheme) { key, _, isLong in
            keys.append(key)
            hasLongKeys = hasLongKeys || isLong
        }
        // Long keys came last; they belong among the short ones.
        return hasLongKeys ? DefaultsKeyPrefix.sorted(keys) : keys
    }

    /// The stored keys under `prefix` with their values.
    func allValues(withPrefix prefix: DefaultsKeyPrefix, scheme: LMDBKeyScheme) throws(DefaultsError) -> [String: DefaultsValue] {
        var values: [String: DefaultsValue] = [:]
        try forEachEntry(withPrefix: prefix, scheme: scheme) { key, record, _ throws(DefaultsError) in
            values[key] = try decode(record, key: key)
        }
        return values
    }

    /// Every stored key.
    func keys(scheme: LMDBKeyScheme) throws(DefaultsError) -> [String] {
        var keys: [String] = []
        try forEachEntry(scheme: scheme) { key, _ in keys.append(key) }
        return keys
    }

    /// Every stored key with its value.
    func allValues(scheme: LMDBKeyScheme) throws(DefaultsError) -> [String: DefaultsValue] {
        var values: [String: DefaultsValue] = [:]
        try forEachEntry(scheme: scheme) { key, record throws(DefaultsError) in
            values[key] = try decode(record, key: key)
        }
        return values
    }

    /// Removes every stored key, keeping the metadata (the format marker, the change log and the
    /// leases); returns the keys removed.
    func removeAllKeys(scheme: LMDBKeyScheme) throws(DefaultsError) -> [String] {
        let removed = try keys(scheme: scheme)
        guard !removed.isEmpty else { return [] }
        var records: [[UInt8]] = []
        try forEach { key, _ in
            if key.first != LMDBKeyScheme.metadataMarker { records.append(Array(key)) }
        }
        for record in records {
            _ = try record.withBytes { record throws(DefaultsError) in try delete(record, for: nil) }
        }
        return removed
    }

    // MARK: Format marker

    /// Checks that this database is an AnyDefaults store of a format this library reads; returns
    /// the format its marker records, or `nil` for a new store without one.
    func checkFormatMarker() throws(DefaultsError) -> UInt8? {
        let marker = try LMDBKeyScheme.formatMarkerKey.withBytes { key throws(DefaultsError) in
            try get(key, for: nil).map(Array.init)
        }
        switch marker {
        case let marker? where marker.count == 1
            && (LMDBKeyScheme.oldestStoreFormatVersion...LMDBKeyScheme.storeFormatVersion).contains(marker[0]):
            return marker[0]
        case let marker? where marker.count == 1 && marker[0] > LMDBKeyScheme.storeFormatVersion:
            throw DefaultsError(
                .incompatibleFormat,
                "The store was written in AnyDefaults LMDB format \(marker[0]); this library reads up to format \(LMDBKeyScheme.storeFormatVersion).",
                backend: LMDBProvider.backend, path: path)
        case .some:
            throw DefaultsError(
                .corrupted, "The store's format marker is damaged.", backend: LMDBProvider.backend, path: path)
        case nil:
            guard try recordCount() == 0 else {
                throw DefaultsError(
                    .incompatibleFormat,
                    "The LMDB database holds data that AnyDefaults did not write; it will not be changed.",
                    backend: LMDBProvider.backend, path: path)
            }
            return nil
        }
    }

    /// Writes the format marker of this version into a new store, or into a store of an older
    /// format (whose records this version reads as they are), in a write transaction, unless
    /// another process has just done so.
    func markNewStore() throws(DefaultsError) {
        if try checkFormatMarker() != LMDBKeyScheme.storeFormatVersion { try writeFormatMarker() }
    }

    private func writeFormatMarker() throws(DefaultsError) {
        try LMDBKeyScheme.formatMarkerKey.withBytes { key throws(DefaultsError) in
            try [LMDBKeyScheme.storeFormatVersion].withBytes { value throws(DefaultsError) in
                try put(key, value, for: nil)
            }
        }
    }
}

/// A change ready for a write transaction: canonical key and encoded value, computed before the
/// write lock is taken. (The key's UTF-8 is read in place when it is written: a copy would cost
/// every write an allocation.)
struct LMDBPreparedChange {
    let key: String
    let value: DefaultsValue?
    let record: [UInt8]?

    init(_ change: DefaultsChange) {
        key = change.key
        value = change.value
        record = change.value.map(LMDBValueCodec.encode)
    }

    /// The bytes this change adds to the store, at most.
    var size: Int { key.utf8.count + (record?.count ?? 0) }
}
