import AnyDefaultsCore

/// What lets a process hear of other processes' commits to a store: a lease on the change log
/// (``SQLiteChangeLog``), which makes the other processes log their changes; a watch on the store
/// file and its write-ahead log (`-wal`), to which every commit appends, with a timer that renews
/// the lease; and a connection of its own to do both.
///
/// Every commit wakes it, this process's own too (which then finds nothing new in the log).
/// Not thread-safe by itself: ``SQLiteSharedFile`` keeps it under a lock.
final class SQLiteChangeWatcher {
    /// The connection that reads the change log and holds the lease.
    let connection: SQLiteConnection
    /// The change log's end when the lease was first taken: where reading starts.
    let startPosition: Int64
    var lease: ChangeLog.Lease
    private let watch: ChangeLog.Watch

    /// Starts watching the store at `path` (absolute): calls `onChange` after each burst of
    /// commits, and `onTimer` every quarter of the lease, which is then due for renewal
    /// (``keepLease()``). The connection is opened with `synchronous` and `busyTimeout`.
    init(
        path: String, synchronous: StaticString, busyTimeout: Duration,
        onChange: @escaping @Sendable () -> Void, onTimer: @escaping @Sendable () -> Void
    ) throws(DefaultsError) {
        connection = try SQLiteConnection(path: path, synchronous: synchronous, busyTimeout: busyTimeout)
        // The watch starts before the lease, so that no commit logged under it goes unnoticed.
        watch = try ChangeLog.Watch(
            files: [path, path + "-wal"], backend: SQLiteProvider.backend, onChange: onChange, onTimer: onTimer)
        let now = ChangeLog.now
        do {
            startPosition = try connection.lease(until: now + ChangeLog.leaseSeconds)
        } catch {
            watch.cancel()
            throw error
        }
        lease = ChangeLog.Lease(takenAt: now)
    }

    /// Renews the lease if a quarter of it has passed, noting whether it had lapsed.
    func keepLease() throws(DefaultsError) {
        let connection = connection
        try lease.keep { end throws(DefaultsError) in _ = try connection.lease(until: end) }
    }

    /// Stops the watch, gives the lease back and closes the connection. A call of `onChange` or
    /// `onTimer` already queued may still arrive. Calling it again does nothing.
    func stop() {
        watch.cancel()
        if connection.isOpen {
            // If it cannot be given back now, it lapses within the lease's length.
            try? connection.releaseLease()
            connection.close()
        }
    }

    deinit { stop() }
}
