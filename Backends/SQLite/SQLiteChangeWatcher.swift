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
    /// The change log's end when the lease was first taken: where reading starts (`nil` until
    /// then).
    private(set) var startPosition: Int64?
    var lease: ChangeLog.Lease
    private let watch: ChangeLog.Watch

    /// Starts watching the store at `path` (absolute): calls `onChange` after each burst of
    /// commits, and `onTimer` every quarter of the lease, which is then due for renewal
    /// (``keepLease()``). The connection is opened with `synchronous` and `busyTimeout`, but the
    /// lease never waits for another process's write lock: it is taken when the watch starts and
    /// renewed while readers catch up, which must not wait on a stopped writer. While another
    /// process holds the lock, the watch starts without its lease
    /// (``ChangeLog/Lease/untaken(at:)``), and takes it at the next ``keepLease()``.
    init(
        path: String, synchronous: StaticString, busyTimeout: Duration,
        onChange: @escaping @Sendable () -> Void, onTimer: @escaping @Sendable () -> Void
    ) throws(DefaultsError) {
        let connection = try SQLiteConnection(path: path, synchronous: synchronous, busyTimeout: busyTimeout)
        self.connection = connection
        // The watch starts before the lease, so that no commit logged under it goes unnoticed.
        watch = try ChangeLog.Watch(
            files: [path, path + "-wal"], backend: SQLiteProvider.backend, onChange: onChange, onTimer: onTimer)
        let now = ChangeLog.now
        do throws(DefaultsError) {
            startPosition = try connection.withoutWaiting { () throws(DefaultsError) in try connection.lease(until: now + ChangeLog.leaseSeconds) }
            lease = ChangeLog.Lease(takenAt: now)
        } catch where error.code == .busy {
            startPosition = nil
            lease = ChangeLog.Lease.untaken(at: now)
        } catch {
            watch.cancel()
            throw error
        }
    }

    /// Renews the lease if a quarter of it has passed (or takes it, if it never was), noting
    /// whether it had lapsed.
    func keepLease() throws(DefaultsError) {
        let connection = connection
        var taken: Int64?
        try lease.keep { end throws(DefaultsError) in
            taken = try connection.withoutWaiting { () throws(DefaultsError) in try connection.lease(until: end) }
        }
        if startPosition == nil { startPosition = taken }
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
