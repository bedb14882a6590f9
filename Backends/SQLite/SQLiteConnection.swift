import AnyDefaultsCore
import CSQLite
import Foundation

/// One SQLite connection to a store file, with its statements prepared once and reused.
///
/// Not thread-safe by itself: ``SQLiteProvider`` keeps it inside a `Mutex`, so no two threads
/// ever call SQLite on it at once (which is also why it is opened with `SQLITE_OPEN_NOMUTEX`).
final class SQLiteConnection {
    /// The absolute path of the store file.
    let path: String
    /// The store file's identity, which other instances on the same file share.
    let fileID: FileID
    /// This process's mark in the change log.
    let origin = ChangeLog.processOrigin
    /// Whether the store could only be opened for reading (its file or directory cannot be
    /// written): reads work, writes fail with `permissionDenied`.
    let isReadOnly: Bool
    var db: OpaquePointer?
    var statements: Statements?
    /// `PRAGMA data_version` as of this connection's last write transaction that read the change
    /// log: while it stays the same, no other connection has committed, so the log holds nothing new.
    var logCheckedAtDataVersion: Int64 = -1
    /// Whether the write transaction under way logged a change, so that the watchers are woken
    /// once it commits.
    var logged = false
    /// Where the busy handler keeps its clock; touched only by SQLite calls made under the lock.
    private let busyWait: UnsafeMutablePointer<SQLiteBusyWait>

    /// The statements the provider runs, prepared when the store opens.
    struct Statements {
        let select: SQLiteStatement
        let upsert: SQLiteStatement
        /// Upserts that leave a row holding an equal value alone (``SQLiteValueComparison``).
        let upsertIfChanged: SQLiteStatement
        let upsertIfDiffers: SQLiteStatement
        let delete: SQLiteStatement
        let keys: SQLiteStatement
        let all: SQLiteStatement
        /// The keys, and the rows, from ?1 up to (not including) ?2: the keys under a prefix.
        let keysInRange: SQLiteStatement
        let allInRange: SQLiteStatement
        let deleteAll: SQLiteStatement
        let watched: SQLiteStatement
        let log: SQLiteStatement
        let logAll: SQLiteStatement
        let prune: SQLiteStatement
        let logRows: SQLiteStatement
        let logEnd: SQLiteStatement
        let dataVersion: SQLiteStatement
        let begin: SQLiteStatement
        let beginRead: SQLiteStatement
        let commit: SQLiteStatement
        let rollback: SQLiteStatement
    }

    /// Opens the store at `path`, creating it (owner-only) if it does not exist and `creating`.
    init(path: String, synchronous: StaticString, busyTimeout: Duration, creating: Bool = true) throws(DefaultsError) {
        // Connections are used from many threads (one at a time), which needs SQLite's own locks.
        guard sqlite3_threadsafe() != 0 else {
            throw DefaultsError(
                .unsupported, "The system's SQLite library was built without thread support.",
                backend: SQLiteProvider.backend, path: path)
        }
        let access: SQLiteStoreFile.Access
        (self.path, fileID, access) = try SQLiteStoreFile.prepare(path, creating: creating)
        isReadOnly = access != .readWrite
        // Before SQLite reads the -wal: it must be this file's (a replaced file's is set aside).
        try SQLiteSidecars.claim(
            path: self.path, file: fileID, counter: SQLiteSharedFile.counter(forStore: self.path), busyTimeout: busyTimeout)
        busyWait = .allocate(capacity: 1)
        busyWait.initialize(to: SQLiteBusyWait(timeout: busyTimeout, store: self.path))
        // From here on deinit runs if the initializer throws, and closes what was opened.
        var handle: OpaquePointer?
        let rc: Int32
        switch access {
        case .readWrite:
            rc = sqlite3_open_v2(self.path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        case .readOnly:
            rc = sqlite3_open_v2(self.path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        case .immutable:
            // A URI, so that the path is taken as it is (percent-encoded) with the parameter.
            let uri = "file:" + (self.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? self.path) + "?immutable=1"
            rc = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        }
        db = handle
        guard rc == SQLITE_OK, let handle else {
            throw DefaultsError.sqlite(rc, db: handle, action: "Opening the store", path: self.path)
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_handler(handle, SQLiteBusyWait.handler, busyWait)
        try SQLiteSchema.open(self, busyTimeout: busyTimeout, readOnly: isReadOnly)
        try execute("PRAGMA synchronous = \(synchronous)", action: "Setting the durability")
        statements = try prepareStatements()
    }

    deinit {
        close()
        busyWait.deinitialize(count: 1)
        busyWait.deallocate()
    }

    /// Whether the connection is open (not closed).
    var isOpen: Bool { db != nil }

    /// When the path was last checked for naming this connection's file (``checkFile(now:)``), in
    /// nanoseconds of a coarse monotonic clock.
    var fileCheckedAt: UInt64 = 0
    /// Whether a write transaction found the file at the path replaced once it held the lock:
    /// the provider opens the path again and retries the write there.
    var replacedWhileWaiting = false
    /// How often a read checks the path at most.
    private static let readCheckInterval: UInt64 = 50_000_000

    /// Whether the path still names the file this connection has open: checked by `stat` on every
    /// write (`always`), at most every 50 ms on reads. Throws `notFound` when nothing is there
    /// any more (the store was deleted or moved away: writing on would lose the writes).
    func namesThisFile(always: Bool) throws(DefaultsError) -> Bool {
        if !always {
            let now = CoarseClock.nanoseconds
            guard now &- fileCheckedAt >= Self.readCheckInterval else { return true }
            fileCheckedAt = now
        }
        guard let current = SQLiteStoreFile.identity(atPath: path) else {
            throw DefaultsError(
                .notFound,
                "The store file was deleted or moved away while the store was open; put it back, or open the store again to create a new one.",
                backend: SQLiteProvider.backend, path: path)
        }
        return current == fileID
    }

    /// Finalizes the statements and closes the connection; later calls fail with `.closed`.
    func close() {
        statements = nil
        guard let db else { return }
        // Every statement still prepared, also those of an initializer that failed part-way, so
        // that the connection really closes.
        while let statement = sqlite3_next_stmt(db, nil) { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
        self.db = nil
    }

    // MARK: Running SQL

    /// Runs `sql` (which may return rows, like a PRAGMA) to its end, ignoring its rows.
    func execute(_ sql: String, action: String) throws(DefaultsError) {
        _ = try query(sql, action: action) { _ in 0 }
    }

    /// The first column of the first row of `sql`, read by `column`, or `nil` without a row.
    func query<Value>(
        _ sql: String, action: String, _ column: (SQLiteStatement) -> Value
    ) throws(DefaultsError) -> Value? {
        let statement = try prepare(sql, persistent: false, action: action)
        defer { sqlite3_finalize(statement.handle) }
        var first: Value?
        while true {
            switch statement.step() {
            case SQLITE_ROW: if first == nil { first = column(statement) }
            case SQLITE_DONE: return first
            case let rc: throw error(rc, action: action)
            }
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` (or `beginning`) ... `COMMIT`, rolling back if
    /// anything fails.
    ///
    /// `BEGIN IMMEDIATE` takes the write lock first (waiting in the busy handler), so that a
    /// transaction never has to upgrade a read lock, which SQLite could refuse without waiting.
    ///
    /// A write transaction checks, once it holds the write lock, that the path still names this
    /// connection's file: a file renamed over the store while the write waited for the lock (for
    /// seconds, perhaps) must not receive it. It then fails with ``replacedWhileWaiting`` set.
    func transaction<Value>(
        with statements: Statements, action: String, beginning: SQLiteStatement? = nil,
        _ body: () throws(DefaultsError) -> Value
    ) throws(DefaultsError) -> Value {
        try check((beginning ?? statements.begin).run(), action: action)
        do throws(DefaultsError) {
            if beginning == nil, try !namesThisFile(always: true) {
                replacedWhileWaiting = true
                throw DefaultsError(
                    .busy, "The store file was replaced while this write waited for the lock.", backend: SQLiteProvider.backend, path: path)
            }
            let result = try body()
            try check(statements.commit.run(), action: action)
            return result
        } catch {
            if let db, sqlite3_get_autocommit(db) == 0 { _ = statements.rollback.run() }
            throw error
        }
    }

    /// Runs `body` with a busy timeout of zero: a lock another process holds fails it with
    /// `busy` at once (unless its holder is dying), rather than after the connection's timeout.
    func withoutWaiting<T>(_ body: () throws(DefaultsError) -> T) throws(DefaultsError) -> T {
        let timeout = busyWait.pointee.timeout
        busyWait.pointee.timeout = .zero
        defer { busyWait.pointee.timeout = timeout }
        return try body()
    }

    /// The error for SQLite result `rc` of `action`.
    func error(_ rc: Int32, action: String, key: String? = nil) -> DefaultsError {
        .sqlite(rc, db: db, action: action, path: path, key: key)
    }

    // MARK: Private

    func open() throws(DefaultsError) -> Statements {
        guard let statements else {
            throw DefaultsError(.closed, "The store was closed.", backend: SQLiteProvider.backend, path: path)
        }
        return statements
    }

    func check(_ rc: Int32, action: String, key: String? = nil) throws(DefaultsError) {
        guard rc == SQLITE_OK else { throw error(rc, action: action, key: key) }
    }

    func prepare(_ sql: String, persistent: Bool, action: String) throws(DefaultsError) -> SQLiteStatement {
        guard let db else {
            throw DefaultsError(.closed, "The store was closed.", backend: SQLiteProvider.backend, path: path)
        }
        var handle: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(db, sql, -1, flags, &handle, nil)
        guard rc == SQLITE_OK, let handle else { throw error(rc, action: action) }
        return SQLiteStatement(handle: handle)
    }

    func prepareStatements() throws(DefaultsError) -> Statements {
        let action = "Preparing the store's statements"
        do throws(DefaultsError) {
            // Statement journals (of the statements that change many rows) stay in memory.
            try execute("PRAGMA temp_store = MEMORY", action: action)
            if let db { try check(SQLiteValueComparison.register(on: db), action: action) }
            let table = SQLiteSchema.table
            return Statements(
                select: try prepare("SELECT type, value FROM \(table) WHERE key = ?1", persistent: true, action: action),
                upsert: try prepare(SQLiteValueComparison.upsertSQL, persistent: true, action: action),
                upsertIfChanged: try prepare(SQLiteValueComparison.upsertIfChangedSQL, persistent: true, action: action),
                upsertIfDiffers: try prepare(SQLiteValueComparison.upsertIfDiffersSQL, persistent: true, action: action),
                delete: try prepare("DELETE FROM \(table) WHERE key = ?1", persistent: true, action: action),
                keys: try prepare("SELECT key FROM \(table)", persistent: true, action: action),
                all: try prepare("SELECT key, type, value FROM \(table)", persistent: true, action: action),
                keysInRange: try prepare(SQLiteSchema.rangeSQL("key"), persistent: true, action: action),
                allInRange: try prepare(SQLiteSchema.rangeSQL("key, type, value"), persistent: true, action: action),
                deleteAll: try prepare("DELETE FROM \(table)", persistent: true, action: action),
                watched: try prepare(SQLiteChangeLog.watchedSQL, persistent: true, action: action),
                log: try prepare(SQLiteChangeLog.logSQL, persistent: true, action: action),
                logAll: try prepare(SQLiteChangeLog.logAllSQL, persistent: true, action: action),
                prune: try prepare(SQLiteChangeLog.pruneSQL, persistent: true, action: action),
                logRows: try prepare(SQLiteChangeLog.rowsSQL, persistent: true, action: action),
                logEnd: try prepare(SQLiteChangeLog.endSQL, persistent: true, action: action),
                dataVersion: try prepare("PRAGMA data_version", persistent: true, action: action),
                begin: try prepare("BEGIN IMMEDIATE", persistent: true, action: action),
                beginRead: try prepare("BEGIN", persistent: true, action: action),
                commit: try prepare("COMMIT", persistent: true, action: action),
                rollback: try prepare("ROLLBACK", persistent: true, action: action))
        } catch {
            // The identity checks passed, so a missing table or column means a damaged schema.
            throw DefaultsError(
                .corrupted,
                "The store's tables '\(SQLiteSchema.table)', '\(SQLiteChangeLog.table)' and '\(SQLiteChangeLog.watchers)' are missing or have the wrong columns.",
                backend: SQLiteProvider.backend, path: path, cause: error)
        }
    }
}

// MARK: Inspection, for tests

extension SQLiteConnection {
    /// Lowers the largest string or blob SQLite accepts, to provoke a failure part-way through a
    /// batch.
    func limitLength(to bytes: Int32) {
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, bytes)
    }

    /// How many statements are prepared on the connection right now.
    var preparedStatementCount: Int {
        var count = 0
        var statement = sqlite3_next_stmt(db, nil)
        while let current = statement {
            count += 1
            statement = sqlite3_next_stmt(db, current)
        }
        return count
    }
}
