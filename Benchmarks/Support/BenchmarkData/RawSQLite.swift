import CSQLite

/// The raw baseline: one connection opened like SQLiteProvider's (read-write, no SQLite mutex,
/// WAL, the same synchronous setting), with its statements prepared once.
///
/// `@unchecked Sendable` is safe: package-benchmark runs one benchmark at a time, on one thread,
/// so the connection is never used by two threads at once.
public final class RawSQLite: @unchecked Sendable {
    private let db: OpaquePointer
    private let select: OpaquePointer
    private let upsert: OpaquePointer
    private let begin: OpaquePointer
    private let commit: OpaquePointer

    public struct Failure: Error {
        var message: String
    }

    static let selectSQL = "SELECT type, value FROM defaults WHERE key = ?1"

    public init(path: String, full: Bool) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            throw Failure(message: "open \(path)")
        }
        self.db = db
        sqlite3_busy_timeout(db, 5000)
        guard sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(full ? "FULL" : "NORMAL")", nil, nil, nil) == SQLITE_OK
        else { throw Failure(message: "pragmas") }
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
                let statement
            else { throw Failure(message: String(cString: sqlite3_errmsg(db))) }
            return statement
        }
        select = try prepare(Self.selectSQL)
        upsert = try prepare(
            """
            INSERT INTO defaults (key, type, value) VALUES (?1, ?2, ?3)
            ON CONFLICT (key) DO UPDATE SET type = excluded.type, value = excluded.value
            """)
        begin = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
    }

    deinit {
        for statement in [select, upsert, begin, commit] { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    /// Records a lease on the store's change log for a process that is not this one, as a process
    /// watching the store for changes holds while it runs: writes are logged from then on.
    public static func leaseToAnotherProcess(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw Failure(message: "open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        guard sqlite3_exec(db, "INSERT INTO watchers VALUES (42, 4102444800)", nil, nil, nil) == SQLITE_OK else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// Commits more frames than the automatic checkpoint lets the log hold (1000 pages), without
    /// flushing, then checkpoints, so that later commits reuse the log from its start.
    public static func fillLog(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw Failure(message: "open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 5000)
        var sql = "PRAGMA synchronous = OFF;"
        for index in 0..<1100 {
            sql += "INSERT INTO defaults VALUES ('warm-up', 'int', \(index)) ON CONFLICT (key) DO UPDATE SET value = excluded.value;"
        }
        sql += "DELETE FROM defaults WHERE key = 'warm-up'; PRAGMA wal_checkpoint(PASSIVE);"
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// Reads the int stored under `key` (checking its type name's first byte, as any reader must
    /// look at the type), or `nil`.
    public func read(key: StaticString) -> Int64? {
        sqlite3_bind_text(select, 1, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self), Int32(key.utf8CodeUnitCount), nil)
        defer { sqlite3_reset(select) }
        return Self.int(from: select)
    }

    /// Reads the int stored under `key`, given as a Swift string (bound as its UTF-8 bytes).
    public func read(key: String) -> Int64? {
        defer { sqlite3_reset(select) }
        var key = key
        // Bound without a copy (SQLITE_STATIC), so the step happens while the bytes are there.
        return key.withUTF8 { bytes in
            sqlite3_bind_text(select, 1, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
            return Self.int(from: select)
        }
    }

    /// Stores the int `value` under `key` in one autocommit statement.
    public func upsert(key: StaticString, value: Int64) {
        let int: StaticString = "int"
        sqlite3_bind_text(upsert, 1, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self), Int32(key.utf8CodeUnitCount), nil)
        sqlite3_bind_text(upsert, 2, UnsafeRawPointer(int.utf8Start).assumingMemoryBound(to: CChar.self), 3, nil)
        sqlite3_bind_int64(upsert, 3, value)
        sqlite3_step(upsert)
        sqlite3_reset(upsert)
    }

    /// Stores the int `value` under each of `keys` in one transaction (`BEGIN IMMEDIATE`, as the
    /// provider's batches take the write lock first).
    public func batch(keys: [StaticString], value: Int64) {
        sqlite3_step(begin)
        sqlite3_reset(begin)
        for key in keys { upsert(key: key, value: value) }
        sqlite3_step(commit)
        sqlite3_reset(commit)
    }

    /// Opens the store at `path`, reads the int under `key` with a statement prepared for it, and
    /// closes the connection: the least a program that opens the store to read one value does.
    public static func openAndRead(path: String, key: String) -> Int64? {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else { return nil }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, selectSQL, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        defer { sqlite3_finalize(statement) }
        // Bound without a copy (SQLITE_STATIC), so the step happens while the bytes are there.
        return key.withCString { bytes in
            sqlite3_bind_text(statement, 1, bytes, -1, nil)
            return int(from: statement)
        }
    }

    /// Opens the store at `path`, steps through every row reading its three columns, and closes
    /// the connection; returns a checksum of what it read.
    public static func openAndScan(path: String) -> Int {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else { return 0 }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT key, type, value FROM defaults", -1, &statement, nil) == SQLITE_OK, let statement
        else { return 0 }
        defer { sqlite3_finalize(statement) }
        var checksum = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            let key = sqlite3_column_text(statement, 0)?[0] ?? 0
            let type = sqlite3_column_text(statement, 1)?[0] ?? 0
            checksum &+= Int(key) &+ Int(type) &+ Int(truncatingIfNeeded: sqlite3_column_int64(statement, 2))
        }
        return checksum
    }

    /// Steps `statement` (a bound select) to its first row and reads its int value, if it is one.
    private static func int(from statement: OpaquePointer) -> Int64? {
        guard sqlite3_step(statement) == SQLITE_ROW, let type = sqlite3_column_text(statement, 0), type[0] == UInt8(ascii: "i")
        else { return nil }
        return sqlite3_column_int64(statement, 1)
    }
}
