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
    private var db: OpaquePointer?
    private var statements: Statements?
    /// `PRAGMA data_version` as of this connection's last write transaction that read the change
    /// log: while it stays the same, no other connection has committed, so the log holds nothing new.
    private var logCheckedAtDataVersion: Int64 = -1
    /// Whether the write transaction under way logged a change, so that the watchers are woken
    /// once it commits.
    private var logged = false
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
        busyWait.initialize(to: SQLiteBusyWait(timeout: busyTimeout))
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
    private var fileCheckedAt: UInt64 = 0
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

    // MARK: Operations

    /// The value stored under the canonical `key`, or `nil`.
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        try read(key, with: try open())
    }

    /// Every stored key.
    func keys() throws(DefaultsError) -> [String] {
        try storedKeys(with: open())
    }

    /// Every stored key with its value, read in one snapshot.
    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        let statements = try open()
        var result: [String: DefaultsValue] = [:]
        let pairs = try rows(of: statements.all, action: "Reading all values") { statement throws(DefaultsError) in
            let key = try storedKey(in: statement)
            return (key, try storedValue(in: statement, type: 1, value: 2, key: key))
        }
        for (key, value) in pairs { result[key] = value }
        return result
    }

    /// The stored keys under `prefix`, in UTF-8 order: one range of the table's primary key (its
    /// `BINARY` collation is the UTF-8 byte order), so the cost follows the keys in the range.
    func keys(withPrefix prefix: DefaultsKeyPrefix) throws(DefaultsError) -> [String] {
        try inRange(prefix, columns: "key", statement: \.keysInRange, action: "Listing the keys under a prefix") {
            statement throws(DefaultsError) in try storedKey(in: statement)
        }
    }

    /// The stored keys under `prefix` with their values, read by one statement (one snapshot).
    func allValues(withPrefix prefix: DefaultsKeyPrefix) throws(DefaultsError) -> [String: DefaultsValue] {
        let pairs = try inRange(
            prefix, columns: "key, type, value", statement: \.allInRange, action: "Reading the values under a prefix"
        ) { statement throws(DefaultsError) in
            let key = try storedKey(in: statement)
            return (key, try storedValue(in: statement, type: 1, value: 2, key: key))
        }
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }

    /// The rows of the range of `prefix`, read by `row`: with the prepared `statement` when the
    /// range has an upper bound (the usual case), else with a statement prepared for the call.
    private func inRange<Row>(
        _ prefix: DefaultsKeyPrefix, columns: String, statement: KeyPath<Statements, SQLiteStatement>, action: String,
        _ row: (SQLiteStatement) throws(DefaultsError) -> Row
    ) throws(DefaultsError) -> [Row] {
        let statements = try open()
        var lower = prefix.canonical
        guard var upper = prefix.upperBound else {
            let unbounded = try prepare(SQLiteSchema.rangeSQL(columns, bounded: false), persistent: false, action: action)
            defer { sqlite3_finalize(unbounded.handle) }
            try check(lower.withUTF8 { unbounded.bind(copyOfText: $0, to: 1) }, action: action)
            return try rows(of: unbounded, action: action, row)
        }
        let bounded = statements[keyPath: statement]
        try check(lower.withUTF8 { bounded.bind(copyOfText: $0, to: 1) }, action: action)
        try check(upper.withUTF8 { bounded.bind(copyOfText: $0, to: 2) }, action: action)
        return try rows(of: bounded, action: action, row)
    }

    /// Applies canonical, validated `changes` in one transaction and returns the events of the
    /// keys whose value changed; with `reportingEvents` false it returns none.
    ///
    /// With a `logPosition` (this process watches the store and someone observes), the commits of
    /// other processes logged after that position are read first, inside the transaction, and
    /// returned as ``SQLiteCommitEvents/earlier``, with the position after them.
    func apply(
        _ changes: [DefaultsChange], reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> SQLiteCommitEvents {
        let statements = try open()
        return try transaction(with: statements, action: "Applying the changes", logPosition: logPosition) {
            () throws(DefaultsError) in
            try write(changes, reportingEvents: reportingEvents, with: statements)
        }
    }

    /// Writes `changes` inside a transaction and returns their events (if `reportingEvents`).
    private func write(_ changes: [DefaultsChange], reportingEvents: Bool, with statements: Statements) throws(DefaultsError) -> [DefaultsChangeEvent] {
        let logging = try isWatched(with: statements)
        // Only the changes that really change a value are reported and logged: each write
        // then says whether it changed its row (no read of the old value).
        let comparing = reportingEvents || logging
        var events: [DefaultsChangeEvent] = []
        if reportingEvents { events.reserveCapacity(changes.count) }
        for change in changes {
            guard try write(change, comparing: comparing, with: statements), comparing else { continue }
            if logging { try log(change.key, with: statements) }
            if reportingEvents { events.append(DefaultsChangeEvent(key: change.key, newValue: change.value)) }
        }
        return events
    }

    /// Applies canonical, validated `changes` in one transaction if every key of `expected`
    /// (canonical) holds exactly its value (`nil`: no row), else nothing; `reportingEvents` and
    /// `logPosition` as in ``apply(_:reportingEvents:logPosition:)``. A damaged value counts as
    /// changed.
    func apply(
        _ changes: [DefaultsChange], ifUnchanged expected: [(key: String, value: DefaultsValue?)], reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> (applied: Bool, events: SQLiteCommitEvents) {
        let statements = try open()
        var applied = false
        let events = try transaction(with: statements, action: "Applying the changes", logPosition: logPosition) {
            () throws(DefaultsError) in
            applied = false
            for (key, value) in expected {
                let stored: DefaultsValue?
                do throws(DefaultsError) {
                    stored = try read(key, with: statements)
                } catch where error.code == .corrupted {
                    return []
                }
                guard stored == value else { return [] }
            }
            applied = true
            return try write(changes, reportingEvents: reportingEvents, with: statements)
        }
        return (applied, events)
    }

    /// Removes each key of `expected` (canonical) that holds exactly its value, in one transaction,
    /// so that no other connection's write comes between the comparison and the removal. Returns
    /// the keys removed and the events (those only if `reportingEvents`); `logPosition` as in
    /// ``apply(_:reportingEvents:logPosition:)``. A damaged value counts as changed.
    func removeUnchanged(
        _ expected: [(key: String, value: DefaultsValue)], reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> (removed: [String], events: SQLiteCommitEvents) {
        let statements = try open()
        var removed: [String] = []
        let events = try transaction(with: statements, action: "Removing unchanged values", logPosition: logPosition) {
            () throws(DefaultsError) in
            removed = []
            let logging = try isWatched(with: statements)
            for (key, value) in expected where try previousValue(key, with: statements) == value {
                guard try write(.remove(key), comparing: true, with: statements) else { continue }
                removed.append(key)
                if logging { try log(key, with: statements) }
            }
            return reportingEvents ? removed.map { DefaultsChangeEvent(key: $0, newValue: nil) } : []
        }
        return (removed, events)
    }

    /// Removes the canonical `key` in one transaction and returns whether it held a value, with
    /// the event of its removal if `reportingEvents`; `logPosition` as in
    /// ``apply(_:reportingEvents:logPosition:)``.
    func remove(
        _ key: String, reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> (existed: Bool, events: SQLiteCommitEvents) {
        let statements = try open()
        var existed = false
        let events = try transaction(with: statements, action: "Removing the value", logPosition: logPosition) {
            () throws(DefaultsError) in
            existed = try write(.remove(key), comparing: true, with: statements)
            guard existed else { return [] }
            if try isWatched(with: statements) { try log(key, with: statements) }
            return reportingEvents ? [DefaultsChangeEvent(key: key, newValue: nil)] : []
        }
        return (existed, events)
    }

    /// Removes every key and returns the events of the removed keys if `reportingEvents`;
    /// `logPosition` as in ``apply(_:reportingEvents:logPosition:)``.
    func removeAll(reportingEvents: Bool, logPosition: Int64?) throws(DefaultsError) -> SQLiteCommitEvents {
        let statements = try open()
        let action = "Removing all values"
        return try transaction(with: statements, action: action, logPosition: logPosition) {
            () throws(DefaultsError) in
            let keys = reportingEvents ? try storedKeys(with: statements) : []
            if try isWatched(with: statements) {
                try check(statements.logAll.bind(origin, to: 1), action: action)
                try check(statements.logAll.run(), action: action)
                let count = sqlite3_changes64(db)
                if count > 0 {
                    logged = true
                    let last = sqlite3_last_insert_rowid(db)
                    // Prune as if each row had been logged alone: if a multiple of the interval was passed.
                    if last / ChangeLog.pruneInterval != (last - count) / ChangeLog.pruneInterval {
                        try prune(after: last, with: statements)
                    }
                }
            }
            try check(statements.deleteAll.run(), action: action)
            return keys.map { DefaultsChangeEvent(key: $0, newValue: nil) }
        }
    }

    /// Runs the write transaction `body` (which returns this commit's events), reading the other
    /// processes' commits logged after `logPosition` first.
    private func transaction(
        with statements: Statements, action: String, logPosition: Int64?,
        _ body: () throws(DefaultsError) -> [DefaultsChangeEvent]
    ) throws(DefaultsError) -> SQLiteCommitEvents {
        try ringingDoorbellIfLogged { () throws(DefaultsError) in
            try transaction(with: statements, action: action) { () throws(DefaultsError) in
                guard let logPosition else { return SQLiteCommitEvents(own: try body()) }
                let version = try integer(from: statements.dataVersion, action: action)
                guard version != logCheckedAtDataVersion else { return SQLiteCommitEvents(own: try body()) }
                let earlier = try logEvents(after: logPosition, complete: true, with: statements)
                logCheckedAtDataVersion = version
                return SQLiteCommitEvents(earlier: earlier, own: try body())
            }
        }
    }

    /// Runs `write`, which commits, and if it logged a change (another process watches the
    /// store), wakes the watchers (`ChangeLog.ringDoorbell`).
    private func ringingDoorbellIfLogged<T>(_ write: () throws(DefaultsError) -> T) throws(DefaultsError) -> T {
        logged = false
        let result = try write()
        if logged { ChangeLog.ringDoorbell(path: path) }
        return result
    }

    /// Whether a process other than this one holds a lease on the change log, so that this write
    /// transaction must log what it changes. Asked inside the transaction.
    private func isWatched(with statements: Statements) throws(DefaultsError) -> Bool {
        try check(statements.watched.bind(origin, to: 1), action: "Reading the change log's leases")
        return try integer(from: statements.watched, action: "Reading the change log's leases") != 0
    }

    /// Logs a change of `key` made by this process, and prunes the log every
    /// ``ChangeLog/pruneInterval`` rows.
    private func log(_ key: String, with statements: Statements) throws(DefaultsError) {
        let action = "Logging the change"
        let rc = statements.log.withBound(text: key, to: 1) { rc in
            guard rc == SQLITE_OK else { return rc }
            let bound = statements.log.bind(origin, to: 2)
            return bound == SQLITE_OK ? statements.log.step() : bound
        }
        guard rc == SQLITE_DONE else { throw error(rc, action: action, key: key) }
        logged = true
        let sequence = sqlite3_last_insert_rowid(db)
        if sequence % ChangeLog.pruneInterval == 0 { try prune(after: sequence, with: statements) }
    }

    /// Prunes the change log as of its row `sequence` (``SQLiteChangeLog/pruneSQL``).
    private func prune(after sequence: Int64, with statements: Statements) throws(DefaultsError) {
        try check(statements.prune.bind(sequence, to: 1), action: "Pruning the change log")
        try check(statements.prune.run(), action: "Pruning the change log")
    }

    /// The integer in the first column of the one row `statement` returns.
    func integer(from statement: SQLiteStatement, action: String) throws(DefaultsError) -> Int64 {
        defer { statement.reset() }
        let rc = statement.step()
        guard rc == SQLITE_ROW else { throw error(rc, action: action) }
        return statement.int64(column: 0)
    }

    func storedKeys(with statements: Statements) throws(DefaultsError) -> [String] {
        try rows(of: statements.keys, action: "Listing the keys") { statement throws(DefaultsError) in
            try storedKey(in: statement)
        }
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
    func transaction<Value>(
        with statements: Statements, action: String, beginning: SQLiteStatement? = nil,
        _ body: () throws(DefaultsError) -> Value
    ) throws(DefaultsError) -> Value {
        try check((beginning ?? statements.begin).run(), action: action)
        do throws(DefaultsError) {
            let result = try body()
            try check(statements.commit.run(), action: action)
            return result
        } catch {
            if let db, sqlite3_get_autocommit(db) == 0 { _ = statements.rollback.run() }
            throw error
        }
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

    private func prepareStatements() throws(DefaultsError) -> Statements {
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

    private func read(_ key: String, with statements: Statements) throws(DefaultsError) -> DefaultsValue? {
        let select = statements.select
        let result: Result<DefaultsValue?, DefaultsError> = select.withBound(text: key, to: 1) { rc in
            guard rc == SQLITE_OK else { return .failure(error(rc, action: "Reading the value", key: key)) }
            switch select.step() {
            case SQLITE_ROW:
                return Result { () throws(DefaultsError) in try storedValue(in: select, type: 0, value: 1, key: key) }
            case SQLITE_DONE:
                return .success(nil)
            case let rc:
                return .failure(error(rc, action: "Reading the value", key: key))
            }
        }
        return try result.get()
    }

    /// The value a write would replace; a damaged one counts as absent, so that it can be
    /// overwritten (and the write reported) whether or not anyone observes.
    func previousValue(_ key: String, with statements: Statements) throws(DefaultsError) -> DefaultsValue? {
        do throws(DefaultsError) {
            return try read(key, with: statements)
        } catch where error.code == .corrupted {
            return nil
        }
    }

    /// Writes one change; returns whether a row was written or removed. With `comparing`, a row
    /// that already holds an equal value is left alone, and the write returns `false`.
    private func write(_ change: DefaultsChange, comparing: Bool, with statements: Statements) throws(DefaultsError) -> Bool {
        let (statement, action) =
            switch change.value {
            case nil: (statements.delete, "Removing the value")
            case let value? where comparing:
                (
                    SQLiteValueComparison.needsFunction(value) ? statements.upsertIfDiffers : statements.upsertIfChanged,
                    "Writing the value"
                )
            case _?: (statements.upsert, "Writing the value")
            }
        let rc = statement.withBound(text: change.key, to: 1) { rc in
            guard rc == SQLITE_OK else { return rc }
            if let value = change.value {
                let rc = SQLiteRowFormat.bind(value, type: 2, value: 3, in: statement)
                guard rc == SQLITE_OK else { return rc }
            }
            return statement.step()
        }
        guard rc == SQLITE_DONE else { throw error(rc, action: action, key: change.key) }
        return sqlite3_changes64(db) > 0
    }

    func rows<Row>(
        of statement: SQLiteStatement, action: String, _ row: (SQLiteStatement) throws(DefaultsError) -> Row
    ) throws(DefaultsError) -> [Row] {
        defer { statement.reset() }
        var result: [Row] = []
        while true {
            switch statement.step() {
            case SQLITE_ROW: result.append(try row(statement))
            case SQLITE_DONE: return result
            case let rc: throw error(rc, action: action)
            }
        }
    }

    private func storedKey(in statement: SQLiteStatement) throws(DefaultsError) -> String {
        guard statement.type(column: 0) == SQLITE_TEXT,
            let key = String(validating: statement.textBytes(column: 0).assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        else {
            throw DefaultsError(
                .corrupted, "A key in the store is not valid UTF-8 text.", backend: SQLiteProvider.backend, path: path)
        }
        return key
    }

    private func storedValue(
        in statement: SQLiteStatement, type: Int32, value: Int32, key: String
    ) throws(DefaultsError) -> DefaultsValue {
        do {
            return try SQLiteRowFormat.read(type: type, value: value, of: statement)
        } catch {
            throw DefaultsError(
                .corrupted, "The value stored under this key is damaged: \(error.reason).",
                backend: SQLiteProvider.backend, key: key, path: path, cause: error)
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
