import AnyDefaultsCore
import CLMDB

/// The change log and the watchers' leases (the scheme of `AnyDefaultsCore.ChangeLog`), kept as
/// metadata records of the store's one database, so that a commit and its log entries are one
/// transaction:
///
/// - a log entry: key `0xFE "log."` + sequence number (8 bytes, big-endian, so entries sort in
///   order); data: the writer's origin and the time (8 bytes each, big-endian), then the key's
///   UTF-8;
/// - a lease: key `0xFE "lease."` + origin (8 bytes, big-endian); data: when it ends (8 bytes,
///   big-endian Unix seconds).
///
/// Metadata keys start with `0xFE`, which never occurs in UTF-8, so they are never taken for
/// defaults keys (``LMDBKeyScheme``).
enum LMDBChangeLog {
    static let logPrefix: [UInt8] = [LMDBKeyScheme.metadataMarker] + Array("log.".utf8)
    static let leasePrefix: [UInt8] = [LMDBKeyScheme.metadataMarker] + Array("lease.".utf8)

    static func logKey(_ sequence: Int64) -> [UInt8] { logPrefix + bigEndian(sequence) }

    /// The highest sequence number a log continues from; beyond it (or below zero) the number
    /// comes from a damaged entry, and the log starts again rather than overflow.
    static let sequenceLimit = Int64.max / 2
    static func leaseKey(_ origin: Int64) -> [UInt8] { leasePrefix + bigEndian(origin) }

    static func bigEndian(_ value: Int64) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * Int64($0))) }
    }

    /// The big-endian number at `offset` in `bytes`, or `nil` if they are too short.
    static func number(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64? {
        guard bytes.count >= offset + 8 else { return nil }
        return bytes[offset..<offset + 8].reduce(0) { $0 << 8 | Int64($1) }
    }
}

extension LMDBTransaction {
    // MARK: Leases

    /// When the lease of a process other than `origin` that has not ended at `now` ends (the first
    /// such lease found), or `nil` when no other process watches.
    func watchedUntil(byOtherThan origin: Int64, now: Int64) throws(DefaultsError) -> Int64? {
        var watchedUntil: Int64?
        try scan(LMDBChangeLog.leasePrefix) { key, data in
            let holder = LMDBChangeLog.number(in: key, at: LMDBChangeLog.leasePrefix.count)
            let end = LMDBChangeLog.number(in: data, at: 0) ?? 0
            if holder != origin, end > now { watchedUntil = end }
            return watchedUntil == nil
        }
        return watchedUntil
    }

    /// Takes or renews the lease of `origin` until `end`, dropping leases that ended before `now`
    /// (of processes that stopped without giving theirs back).
    func putLease(origin: Int64, until end: Int64, now: Int64) throws(DefaultsError) {
        var lapsed: [[UInt8]] = []
        try scan(LMDBChangeLog.leasePrefix) { key, data in
            if (LMDBChangeLog.number(in: data, at: 0) ?? 0) <= now { lapsed.append(Array(key)) }
            return true
        }
        for key in lapsed { _ = try key.withBytes { key throws(DefaultsError) in try delete(key, for: nil) } }
        try LMDBChangeLog.leaseKey(origin).withBytes { key throws(DefaultsError) in
            try LMDBChangeLog.bigEndian(end).withBytes { data throws(DefaultsError) in try put(key, data, for: nil) }
        }
    }

    /// The origins holding a lease, ended or not.
    func leaseHolders() throws(DefaultsError) -> [Int64] {
        var holders: [Int64] = []
        try scan(LMDBChangeLog.leasePrefix) { key, _ in
            if let holder = LMDBChangeLog.number(in: key, at: LMDBChangeLog.leasePrefix.count) { holders.append(holder) }
            return true
        }
        return holders
    }

    /// Gives back the lease of `origin`.
    func deleteLease(origin: Int64) throws(DefaultsError) {
        _ = try LMDBChangeLog.leaseKey(origin).withBytes { key throws(DefaultsError) in try delete(key, for: nil) }
    }

    // MARK: The log

    /// The sequence number of the newest log entry, or 0.
    func logEnd() throws(DefaultsError) -> Int64 {
        try withCursor(action: "read the change log") { cursor throws(DefaultsError) -> Int64 in
            // The first key after every log entry, then one step back.
            var after = LMDBChangeLog.logPrefix
            after[after.count - 1] += 1
            var key = MDB_val()
            var data = MDB_val()
            var rc = after.withUnsafeMutableBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
            if rc == MDB_SUCCESS || rc == MDB_NOTFOUND {
                rc = mdb_cursor_get(cursor, &key, &data, rc == MDB_NOTFOUND ? MDB_LAST : MDB_PREV)
            }
            if rc == MDB_NOTFOUND { return 0 }
            guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "read the change log", path: path) }
            let last = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            guard last.starts(with: LMDBChangeLog.logPrefix) else { return 0 }
            return LMDBChangeLog.number(in: last, at: LMDBChangeLog.logPrefix.count) ?? 0
        }
    }

    /// Appends one entry per key, in order, for `origin` at `now`, and prunes old entries when a
    /// sequence number passes a multiple of the prune interval.
    func appendToLog(_ keys: [String], origin: Int64, now: Int64) throws(DefaultsError) {
        var sequence = try logEnd()
        if !(0...LMDBChangeLog.sequenceLimit).contains(sequence) {
            // A sequence number no run of writes reaches (a damaged or hand-edited entry): the log
            // starts again, which readers take as "anything may have changed".
            try removeLog()
            sequence = 0
        }
        var prune = false
        for key in keys {
            sequence += 1
            prune = prune || sequence % ChangeLog.pruneInterval == 0
            let data = LMDBChangeLog.bigEndian(origin) + LMDBChangeLog.bigEndian(now) + Array(key.utf8)
            try LMDBChangeLog.logKey(sequence).withBytes { logKey throws(DefaultsError) in
                try data.withBytes { data throws(DefaultsError) in try put(logKey, data, for: key) }
            }
        }
        guard prune else { return }
        // Oldest first: those both far enough behind and old enough, up to the first to keep.
        var old: [[UInt8]] = []
        try scan(LMDBChangeLog.logPrefix) { key, data in
            let entry = LMDBChangeLog.number(in: key, at: LMDBChangeLog.logPrefix.count) ?? 0
            let time = LMDBChangeLog.number(in: data, at: 8) ?? 0
            guard entry <= sequence - ChangeLog.keptEntries, time < now - ChangeLog.keptSeconds else { return false }
            old.append(Array(key))
            return true
        }
        for key in old { _ = try key.withBytes { key throws(DefaultsError) in try delete(key, for: nil) } }
    }

    /// Removes every log entry.
    private func removeLog() throws(DefaultsError) {
        var entries: [[UInt8]] = []
        try scan(LMDBChangeLog.logPrefix) { key, _ in
            entries.append(Array(key))
            return true
        }
        for key in entries { _ = try key.withBytes { key throws(DefaultsError) in try delete(key, for: nil) } }
    }

    /// The log entries from `position` on: the entry at `position` if it is still there and every
    /// later one, or the newest entry alone if it is older than `position` (the log was emptied).
    func logEntries(from position: Int64) throws(DefaultsError) -> [ChangeLog.Entry] {
        let start = min(position, try logEnd())
        var entries: [ChangeLog.Entry] = []
        try scan(LMDBChangeLog.logPrefix, from: LMDBChangeLog.logKey(start)) { key, data in
            if let sequence = LMDBChangeLog.number(in: key, at: LMDBChangeLog.logPrefix.count),
                let origin = LMDBChangeLog.number(in: data, at: 0), data.count >= 16
            {
                entries.append(ChangeLog.Entry(sequence: sequence, key: String(decoding: data[16...], as: UTF8.self), origin: origin))
            }
            return true
        }
        return entries
    }

    /// What other processes changed after `position`, as `.external` events carrying the values
    /// stored now (a damaged value as `nil`), with the position after them, and whether the log
    /// told all; every stored key too if it did not (see `ChangeLog.Reading`) or `trusted` is false.
    func externalEvents(
        after position: Int64, trusted: Bool, scheme: LMDBKeyScheme
    ) throws(DefaultsError) -> ChangeLog.Report {
        let reading = ChangeLog.read(try logEntries(from: position), after: position, skipping: ChangeLog.processOrigin)
        let events = try reading.events(trusted: trusted) { () throws(DefaultsError) in
            try keys(scheme: scheme)
        } value: { key in
            (try? value(forKey: key, scheme: scheme)) ?? nil
        }
        return ChangeLog.Report(events: events, end: reading.end, complete: reading.complete && trusted)
    }

    // MARK: Cursors

    /// Calls `body` with each record whose key starts with `prefix`, from the first at or after
    /// `start` (the prefix itself by default), in key order, while `body` returns true.
    private func scan(
        _ prefix: [UInt8], from start: [UInt8]? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer) throws(DefaultsError) -> Bool
    ) throws(DefaultsError) {
        try withCursor(action: "read the change log") { cursor throws(DefaultsError) in
            var first = start ?? prefix
            var key = MDB_val()
            var data = MDB_val()
            var rc = first.withUnsafeMutableBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
            while rc == MDB_SUCCESS {
                let current = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                guard current.starts(with: prefix),
                    try body(current, UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
                else { return }
                rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
            }
            guard rc == MDB_NOTFOUND else { throw DefaultsError.lmdb(rc, "read the change log", path: path) }
        }
    }
}
