import CSQLite

/// A prepared statement of a ``SQLiteConnection``: thin, allocation-free access to binding,
/// stepping and reading columns. Used only under the connection's lock.
struct SQLiteStatement {
    let handle: OpaquePointer

    /// SQLite's `SQLITE_TRANSIENT`: copy the bytes during the bind call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds a compile-time constant, which outlives the statement, without a copy.
    func bind(static text: StaticString, to index: Int32) -> Int32 {
        text.utf8Start.withMemoryRebound(to: CChar.self, capacity: text.utf8CodeUnitCount) {
            sqlite3_bind_text(handle, index, $0, Int32(text.utf8CodeUnitCount), nil)
        }
    }

    /// Binds an integer.
    func bind(_ value: Int64, to index: Int32) -> Int32 {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds a copy of the UTF-8 `text` (an empty text stays TEXT, not NULL).
    func bind(copyOfText text: UnsafeBufferPointer<UInt8>, to index: Int32) -> Int32 {
        guard let base = text.baseAddress, !text.isEmpty else { return bind(static: "", to: index) }
        return base.withMemoryRebound(to: CChar.self, capacity: text.count) {
            sqlite3_bind_text64(handle, index, $0, UInt64(text.count), Self.transient, UInt8(SQLITE_UTF8))
        }
    }

    /// Binds a copy of `blob` (an empty blob stays a BLOB, not NULL).
    func bind(copyOfBlob blob: UnsafeRawBufferPointer, to index: Int32) -> Int32 {
        guard let base = blob.baseAddress, !blob.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return sqlite3_bind_blob64(handle, index, base, UInt64(blob.count), Self.transient)
    }

    /// Binds `text` without copying it, runs `body` with the bind's result code, then resets the
    /// statement (letting go of every binding) while `text` is still alive. `body` steps the
    /// statement and reads all it needs from it.
    func withBound<Result>(text: String, to index: Int32, _ body: (Int32) -> Result) -> Result {
        var text = text
        return text.withUTF8 { bytes in
            defer { reset() }
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return body(bind(static: "", to: index)) }
            let rc = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(clamping: bytes.count), nil)
            }
            return body(rc)
        }
    }

    func step() -> Int32 { sqlite3_step(handle) }

    /// Ends the current run so the statement can be run again, and lets go of its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows, and resets it.
    func run() -> Int32 {
        defer { reset() }
        let rc = step()
        return rc == SQLITE_DONE ? SQLITE_OK : rc
    }

    func type(column: Int32) -> Int32 { sqlite3_column_type(handle, column) }

    func int64(column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func double(column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The UTF-8 bytes of a TEXT column, valid until the next step or reset.
    func textBytes(column: Int32) -> UnsafeRawBufferPointer {
        let start = sqlite3_column_text(handle, column)
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The bytes of a BLOB column, valid until the next step or reset.
    func blobBytes(column: Int32) -> UnsafeRawBufferPointer {
        let start = sqlite3_column_blob(handle, column)
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column)))
    }
}
