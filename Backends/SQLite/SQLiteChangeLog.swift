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
/// seconds), renewed while it watches. Each write transaction of this library first asks whether
/// a process other than the writer holds a lease (``watchedSQL``) and, if one does, appends a row
/// per changed key to `changes` (``logSQL``), in the same transaction as the change: logging costs
/// a second page per commit (about 1.45× the cost of a bare upsert), so a store that no other
/// process watches does not pay for it. A write that stores the value already stored logs nothing.
/// (The writer logs, rather than triggers on `defaults`: a trigger makes every write statement in a
/// transaction keep a statement journal, which cost about 9k instructions per write even unwatched.)
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
/// key stored and every key in the log. Writes by other programs (the `sqlite3` shell) are not
/// logged.
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

    /// Whether a process other than ?1 holds a lease: then each write transaction logs its changes.
    /// Asked once per write transaction, which holds the write lock, so no lease comes or goes
    /// before it commits.
    static let watchedSQL =
        "SELECT EXISTS (SELECT 1 FROM \(watchers) WHERE origin != ?1 AND expires > \(now))"

    /// Logs a change of key ?1 by origin ?2.
    static let logSQL = "INSERT INTO \(table) (key, origin, time) VALUES (?1, ?2, \(now))"

    /// Logs the removal of every stored key by origin ?1 (before they are removed).
    static let logAllSQL = "INSERT INTO \(table) (key, origin, time) SELECT key, ?1, \(now) FROM \(SQLiteSchema.table)"

    /// Prunes the log once row ?1 was written (every ``ChangeLog/pruneInterval`` rows): the rows
    /// more than ``ChangeLog/keptEntries`` behind it and older than ``ChangeLog/keptSeconds``, in
    /// the order they were written, up to the first one young enough to keep.
    static let pruneSQL = """
        DELETE FROM \(table) WHERE seq <= ?1 - \(ChangeLog.keptEntries) AND seq < coalesce(
            (SELECT seq FROM \(table) WHERE time >= \(now) - \(ChangeLog.keptSeconds) ORDER BY seq LIMIT 1), ?1)
        """

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
