import AnyDefaultsCore
import CSQLite

/// The layout of a store file and how it is recognised, created and migrated.
///
/// A store is an SQLite database in WAL mode whose header carries
/// `PRAGMA application_id = 0x41446566` ("ADef", marking it as an AnyDefaults store) and
/// `PRAGMA user_version` = the schema version, with the table of values:
///
/// ```sql
/// CREATE TABLE defaults (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value) WITHOUT ROWID
/// ```
///
/// and, from version 2, the change log that lets other processes learn which keys changed
/// (``SQLiteChangeLog``).
///
/// `value` has no declared type, so SQLite stores what is bound exactly as it is (no type
/// affinity converts it). Opening a file never guesses: an empty database becomes a store; a store
/// of this version opens; a version-1 store is migrated in one transaction; anything else (another
/// application's database, a newer schema version) is an error and the file is left untouched.
enum SQLiteSchema {
    /// The table that holds the values.
    static let table = "defaults"
    /// "ADef": marks the file as an AnyDefaults store.
    static let applicationID: Int32 = 0x4144_6566
    /// The schema version this library writes and reads.
    static let version: Int32 = 2
    /// The oldest schema version this library migrates.
    static let oldestMigratable: Int32 = 1

    /// Selects `columns` of the rows whose key is from ?1 up to (not including) ?2, in key order:
    /// the keys under a prefix (``DefaultsKeyPrefix``). Both bounds are plain comparisons on the
    /// primary key, so SQLite seeks to the first and stops at the second; with `bounded` false
    /// there is no ?2 (every key from ?1 on).
    static func rangeSQL(_ columns: String, bounded: Bool = true) -> String {
        "SELECT \(columns) FROM \(table) WHERE key >= ?1\(bounded ? " AND key < ?2" : "") ORDER BY key"
    }

    private static let createTable =
        "CREATE TABLE \(table) (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value) WITHOUT ROWID"

    /// What a file holds, read from its header and schema.
    private struct Identity {
        var applicationID: Int32
        var version: Int32
        var schemaObjects: Int64
    }

    /// Makes `connection`'s file a store of this version: checks what it is, switches the journal
    /// to WAL, and creates the table in a new file.
    ///
    /// Several processes may open a new file at once; a step that SQLite refuses with SQLITE_BUSY
    /// without calling the busy handler (switching the journal mode can) is retried until the
    /// busy timeout has passed.
    static func open(_ connection: SQLiteConnection, busyTimeout: Duration, readOnly: Bool = false) throws(DefaultsError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: busyTimeout)
        while true {
            do throws(DefaultsError) {
                return try readOnly ? checkReadOnly(connection) : openOnce(connection)
            } catch where error.code == .busy && clock.now < deadline {
                SQLiteBusyWait.sleep(nanoseconds: 1_000_000)
            }
        }
    }

    private static func openOnce(_ connection: SQLiteConnection) throws(DefaultsError) {
        let identity = try read(connection)
        let isNew = identity.applicationID == 0 && identity.schemaObjects == 0
        // Check first: another application's database must not even have its journal mode changed.
        if !isNew { try check(identity, path: connection.path) }
        // WAL is recorded in the file, so this changes nothing on a store already in WAL mode.
        let mode = try connection.query("PRAGMA journal_mode = WAL", action: "Switching to WAL") { statement in
            String(decoding: statement.textBytes(column: 0), as: UTF8.self)
        }
        guard mode?.lowercased() == "wal" else {
            throw DefaultsError(
                .unsupported,
                "SQLite could not use write-ahead logging for this file (journal mode \(mode ?? "unknown")); "
                    + "the file system may not support the shared memory it needs.",
                backend: SQLiteProvider.backend, path: connection.path)
        }
        if isNew || identity.version < version { try createOrMigrate(connection) }
    }

    /// Checks a store opened read-only: it must be a store of this version already, as nothing can
    /// be created or migrated in it.
    private static func checkReadOnly(_ connection: SQLiteConnection) throws(DefaultsError) {
        let identity = try read(connection)
        guard identity.applicationID != 0 || identity.schemaObjects != 0, identity.version >= version else {
            throw DefaultsError(
                .permissionDenied,
                identity.schemaObjects == 0
                    ? "The store file is empty and cannot be written, so the store cannot be created in it."
                    : "The store was written by an older version and must be migrated, which a store that cannot be written cannot be.",
                backend: SQLiteProvider.backend, path: connection.path)
        }
        try check(identity, path: connection.path)
    }

    /// Reads the identity in one statement, so that it comes from one snapshot even while another
    /// process is creating the store.
    private static func read(_ connection: SQLiteConnection) throws(DefaultsError) -> Identity {
        let identity: Identity?
        do {
            identity = try connection.query(
                """
                SELECT (SELECT application_id FROM pragma_application_id),
                       (SELECT user_version FROM pragma_user_version),
                       (SELECT count(*) FROM sqlite_schema)
                """, action: "Reading the store's header"
            ) { statement in
                Identity(
                    applicationID: Int32(truncatingIfNeeded: statement.int64(column: 0)),
                    version: Int32(truncatingIfNeeded: statement.int64(column: 1)),
                    schemaObjects: statement.int64(column: 2))
            }
        } catch where error.code == .internalError {
            // The statement is fixed and valid, so a plain error here (SQLITE_ERROR, "unsupported
            // file format") comes from the file's header: the file is damaged.
            throw DefaultsError(
                .corrupted,
                "Reading the store's header failed: the file is damaged or of a format this SQLite cannot read. It was left as it is.",
                backend: SQLiteProvider.backend, path: connection.path, cause: error.cause)
        }
        return identity ?? Identity(applicationID: 0, version: 0, schemaObjects: 0)
    }

    private static func check(_ identity: Identity, path: String) throws(DefaultsError) {
        guard identity.applicationID == applicationID else {
            throw DefaultsError(
                .incompatibleFormat,
                "The file is an SQLite database but not an AnyDefaults store (application_id "
                    + "\(identity.applicationID), expected \(applicationID)); it was left as it is.",
                backend: SQLiteProvider.backend, path: path)
        }
        if identity.version > version {
            throw DefaultsError(
                .incompatibleFormat,
                "The store has schema version \(identity.version), written by a newer version of AnyDefaults; "
                    + "this version reads up to \(version). It was left as it is.",
                backend: SQLiteProvider.backend, path: path)
        }
        // Versions below 1 were never written; older ones this library knows are migrated.
        guard identity.version >= oldestMigratable else {
            throw DefaultsError(
                .corrupted, "The store records schema version \(identity.version), which no AnyDefaults wrote.",
                backend: SQLiteProvider.backend, path: path)
        }
    }

    /// Creates the tables in a new file, or brings an older store to this version. Another process
    /// may be doing the same, so it checks again inside the write transaction.
    private static func createOrMigrate(_ connection: SQLiteConnection) throws(DefaultsError) {
        let action = "Creating or migrating the store"
        try connection.execute("BEGIN IMMEDIATE", action: action)
        do throws(DefaultsError) {
            let identity = try read(connection)
            if identity.applicationID == 0, identity.schemaObjects == 0 {
                try connection.execute(createTable, action: action)
                try connection.execute("PRAGMA application_id = \(applicationID)", action: action)
            } else {
                try check(identity, path: connection.path)
            }
            // Version 1 to 2: add the change log (the values are unchanged).
            if identity.version < 2 {
                for statement in SQLiteChangeLog.schema { try connection.execute(statement, action: action) }
            }
            try connection.execute("PRAGMA user_version = \(version)", action: action)
            try connection.execute("COMMIT", action: action)
        } catch {
            try? connection.execute("ROLLBACK", action: action)
            throw error
        }
    }
}
