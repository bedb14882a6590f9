import AnyDefaultsCore

/// The change log of a store (schema version 2): which keys each commit changed, in commit order,
/// so that other processes can report exactly those keys.
///
/// ```sql
/// CREATE TABLE changes (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, origin INTEGER NOT NULL, time INTEGER NOT NULL)
/// CREATE TABLE watchers (origin INTEGER PRIMARY KEY, expires INTEGER NOT NULL)
/// ```
///
/// The scheme is `AnyDefaultsCore.ChangeLog`'s. A process that watches the store for other
/// processes' changes holds a lease in `watchers` (its origin, and when the lease ends, in Unix
/// seconds), renewed while it watches. Triggers on
/// the `defaults` table, created by each connection of this library as `TEMP` triggers (so they
/// know the connection's origin), append a row per changed key to `changes`, in the same
/// transaction as the change, but only while a process other than the writer holds a lease:
/// logging costs a second page per commit (about 1.45× the cost of a bare upsert), so a store that
/// no other process watches does not pay for it. An update that stores the same type and value
/// logs nothing.
///
/// `seq` is the rowid: SQLite gives a new row the largest `seq` plus one, so the log is numbered
/// without gaps in commit order (pruning never removes the newest row). Old rows are pruned every
/// 256th row: those both more than 1024 rows behind and older than 60 seconds, so a reader that
/// keeps up never misses a row, even of a batch of millions of changes.
///
/// A reader remembers the last `seq` it has accounted for (its position) and reads the rows after
/// it, skipping its own process's. If the row after its position is gone (it fell behind by more
/// than the retention), the log was emptied by hand, or its lease lapsed (the process was
/// suspended for longer than the lease), the reading is incomplete: the reader then reports every
/// key stored and every key in the log. Writes by other programs (the `sqlite3` shell) have no
/// triggers and are not logged.
enum SQLiteChangeLog {
    /// The table of the log.
    static let table = "changes"
    /// The table of the watching processes' leases.
    static let watchers = "watchers"

    private static let now = "CAST(strftime('%s', 'now') AS INTEGER)"

    /// The statements that add the log to a store, in one transaction with the version change.
    static let schema: [String] = [
        "CREATE TABLE \(table) (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, origin INTEGER NOT NULL, time INTEGER NOT NULL)",
        "CREATE TABLE \(watchers) (origin INTEGER PRIMARY KEY, expires INTEGER NOT NULL)",
    ]

    /// The `TEMP` triggers a connection of `origin` creates, with `temp_store` in memory so that
    /// they need no temporary file. (SQLite allows only unqualified names for the tables a
    /// trigger changes; no `temp` table has these names, so they are the `main` ones.)
    static func triggers(origin: Int64) -> [String] {
        let values = SQLiteSchema.table
        // Only while another process holds a lease.
        let watched = "EXISTS (SELECT 1 FROM main.\(watchers) WHERE origin != \(origin) AND expires > \(now))"
        func log(_ row: String) -> String {
            "INSERT INTO \(table) (key, origin, time) VALUES (\(row).key, \(origin), \(now));"
        }
        return [
            "PRAGMA temp_store = MEMORY",
            "CREATE TEMP TRIGGER anydefaults_inserted AFTER INSERT ON main.\(values) WHEN \(watched) BEGIN \(log("new")) END",
            // A real zero is logged even when equal: SQL compares 0.0 and -0.0 as equal, but they
            // are different values (logging an unchanged 0.0 costs at most one redundant event).
            """
            CREATE TEMP TRIGGER anydefaults_updated AFTER UPDATE OF type, value ON main.\(values)
            WHEN (old.type IS NOT new.type OR old.value IS NOT new.value OR (typeof(new.value) = 'real' AND new.value = 0))
                AND \(watched)
            BEGIN \(log("new")) END
            """,
            "CREATE TEMP TRIGGER anydefaults_deleted AFTER DELETE ON main.\(values) WHEN \(watched) BEGIN \(log("old")) END",
            // Rows are pruned in the order they were written, up to the first one young enough to keep.
            """
            CREATE TEMP TRIGGER anydefaults_pruned AFTER INSERT ON main.\(table) WHEN new.seq % \(ChangeLog.pruneInterval) = 0 BEGIN
                DELETE FROM \(table) WHERE seq <= new.seq - \(ChangeLog.keptEntries) AND seq < coalesce(
                    (SELECT seq FROM main.\(table) WHERE time >= new.time - \(ChangeLog.keptSeconds) ORDER BY seq LIMIT 1), new.seq);
            END
            """,
        ]
    }

    /// The rows from the reader's position on: the row at the position itself if it is still there,
    /// then every newer one. When the log's newest row is older than the position (the log was
    /// emptied and restarted), that row alone, which tells the reader so.
    static let rowsSQL = """
        SELECT seq, key, origin FROM \(table)
        WHERE seq >= min(?1, coalesce((SELECT max(seq) FROM \(table)), 0)) ORDER BY seq
        """

    /// The position after the newest row (0 for an empty log).
    static let endSQL = "SELECT coalesce(max(seq), 0) FROM \(table)"

    /// Takes or renews the lease of origin ?1 until ?2, dropping lapsed ones (of processes that
    /// ended without giving theirs back).
    static let leaseSQL = [
        "DELETE FROM \(watchers) WHERE expires <= \(now)",
        "INSERT OR REPLACE INTO \(watchers) (origin, expires) VALUES (?1, ?2)",
    ]

    /// Gives back the lease of origin ?1.
    static let releaseSQL = "DELETE FROM \(watchers) WHERE origin = ?1"
}
