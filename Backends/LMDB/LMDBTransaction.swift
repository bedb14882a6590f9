import AnyDefaultsCore
import CLMDB

/// One open LMDB transaction on the store's database, used by one call on one thread.
///
/// The bytes it hands out point into LMDB's map and are valid only until the transaction ends, so
/// callers decode them before returning.
struct LMDBTransaction {
    let pointer: OpaquePointer
    let dbi: MDB_dbi
    /// Not retained, as reads are the hot path: a transaction only exists inside a call on its
    /// environment, which keeps the environment alive.
    unowned(unsafe) let environment: LMDBEnvironment

    /// The store's path, for errors.
    var path: String { environment.path }

    /// The data stored under `key`, or `nil`.
    func get(_ key: UnsafeRawBufferPointer, for userKey: String?) throws(DefaultsError) -> UnsafeRawBufferPointer? {
        let (rc, data) = lookup(key)
        switch rc {
        case MDB_SUCCESS: return data
        case MDB_NOTFOUND: return nil
        default: throw DefaultsError.lmdb(rc, "read", key: userKey, path: path)
        }
    }

    /// The data stored under the UTF-8 of `key`, or `nil`.
    ///
    /// The hot path of reads: the string's own UTF-8 buffer is the LMDB key, and the closure that
    /// receives it returns plain values, which keeps generic overhead out.
    @inline(__always)
    func get(utf8Of key: String) throws(DefaultsError) -> UnsafeRawBufferPointer? {
        let (rc, data) = key.utf8.withContiguousStorageIfAvailable { lookup(UnsafeRawBufferPointer($0)) }
            ?? Array(key.utf8).withUnsafeBytes { lookup($0) }
        switch rc {
        case MDB_SUCCESS: return data
        case MDB_NOTFOUND: return nil
        default: throw DefaultsError.lmdb(rc, "read", key: key, path: path)
        }
    }

    /// `mdb_get`: its status, and the data found.
    @inline(__always)
    private func lookup(_ key: UnsafeRawBufferPointer) -> (Int32, UnsafeRawBufferPointer) {
        var keyVal = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val()
        let rc = mdb_get(pointer, dbi, &keyVal, &data)
        return (rc, UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
    }

    /// Stores `data` under `key`.
    func put(_ key: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer, for userKey: String?) throws(DefaultsError) {
        var keyVal = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataVal = MDB_val(mv_size: data.count, mv_data: UnsafeMutableRawPointer(mutating: data.baseAddress))
        let rc = mdb_put(pointer, dbi, &keyVal, &dataVal, 0)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "write", key: userKey, path: path) }
    }

    /// Deletes `key`; returns whether it was there.
    func delete(_ key: UnsafeRawBufferPointer, for userKey: String?) throws(DefaultsError) -> Bool {
        var keyVal = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(pointer, dbi, &keyVal, nil)
        switch rc {
        case MDB_SUCCESS: return true
        case MDB_NOTFOUND: return false
        default: throw DefaultsError.lmdb(rc, "remove", key: userKey, path: path)
        }
    }

    /// Calls `body` with every record, in key order.
    func forEach(
        _ body: (_ key: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer) throws(DefaultsError) -> Void
    ) throws(DefaultsError) {
        try withCursor(action: "list the keys") { cursor throws(DefaultsError) in
            var key = MDB_val()
            var data = MDB_val()
            var operation = MDB_FIRST
            while true {
                let rc = mdb_cursor_get(cursor, &key, &data, operation)
                if rc == MDB_NOTFOUND { return }
                guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "list the keys", path: path) }
                try body(
                    UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
                    UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
                operation = MDB_NEXT
            }
        }
    }

    /// Calls `body` with every record from the first key not below `start` on, in key order, until
    /// `body` returns false: one cursor positioned with `MDB_SET_RANGE`, so the records before
    /// `start` cost nothing.
    func forEach(
        from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer) throws(DefaultsError) -> Bool
    ) throws(DefaultsError) {
        let action = "list the keys under a prefix"
        try withCursor(action: action) { cursor throws(DefaultsError) in
            try start.withBytes { startBytes throws(DefaultsError) in
                var key = MDB_val(mv_size: startBytes.count, mv_data: UnsafeMutableRawPointer(mutating: startBytes.baseAddress))
                var data = MDB_val()
                // An empty key cannot position a cursor: start from the first record then.
                var operation = startBytes.isEmpty ? MDB_FIRST : MDB_SET_RANGE
                while true {
                    let rc = mdb_cursor_get(cursor, &key, &data, operation)
                    if rc == MDB_NOTFOUND { return }
                    guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, action, path: path) }
                    let more = try body(
                        UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
                        UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
                    guard more else { return }
                    operation = MDB_NEXT
                }
            }
        }
    }

    /// Runs `body` with a cursor on the database, closed afterwards; `action` names what failed
    /// if none can be opened.
    func withCursor<T>(action: String, _ body: (OpaquePointer) throws(DefaultsError) -> T) throws(DefaultsError) -> T {
        var cursor: OpaquePointer?
        let rc = mdb_cursor_open(pointer, dbi, &cursor)
        guard rc == MDB_SUCCESS, let cursor else { throw DefaultsError.lmdb(rc, action, path: path) }
        defer { mdb_cursor_close(cursor) }
        return try body(cursor)
    }

    /// Removes every record.
    func removeAllRecords() throws(DefaultsError) {
        let rc = mdb_drop(pointer, dbi, 0)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "remove all keys", path: path) }
    }

    /// How many records the database holds.
    func recordCount() throws(DefaultsError) -> Int {
        var stat = MDB_stat()
        let rc = mdb_stat(pointer, dbi, &stat)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "read the store's statistics", path: path) }
        return stat.ms_entries
    }
}
