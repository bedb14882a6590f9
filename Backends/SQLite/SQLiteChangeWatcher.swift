import AnyDefaultsCore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What lets a process hear of other processes' commits to a store: a lease on the change log
/// (``SQLiteChangeLog``), which makes the other processes log their changes; a `FileChangeMonitor`
/// on the store file and its write-ahead log (`-wal`), to which every commit appends; a timer
/// that renews the lease; and a connection of its own to do both.
///
/// Event-driven on Linux (inotify: nothing runs while nothing is written, except the lease's
/// renewal every 30 seconds); elsewhere, and where inotify is refused, the monitor compares the
/// two files' `stat` at a fixed interval. Every commit wakes it, this process's own too.
///
/// Not thread-safe by itself: ``SQLiteSharedFile`` keeps it under a lock.
final class SQLiteChangeWatcher {
    /// The connection that reads the change log and holds the lease.
    let connection: SQLiteConnection
    /// The change log's end when the lease was first taken: where reading starts.
    let startPosition: Int64
    /// Whether the lease lapsed (this process was suspended, or could not renew it) since the log
    /// was last read: other processes may have committed changes without logging them.
    var lapsed = false
    /// When the lease ends, in Unix seconds.
    private var leaseEnd: Int64
    private let monitor: FileChangeMonitor
    private let timer: any DispatchSourceTimer

    /// Starts watching the store at `path` (absolute): calls `onChange` on a private queue after
    /// each burst of commits, and `onTimer` every quarter of the lease, which is then due for
    /// renewal (``keepLease()``). The connection is opened with `synchronous` and `busyTimeout`.
    init(
        path: String, synchronous: StaticString, busyTimeout: Duration,
        onChange: @escaping @Sendable () -> Void, onTimer: @escaping @Sendable () -> Void
    ) throws(DefaultsError) {
        connection = try SQLiteConnection(path: path, synchronous: synchronous, busyTimeout: busyTimeout)
        // The watch starts before the lease, so that no commit logged under it goes unnoticed.
        let files = [path, path + "-wal"]
        do {
            monitor = try FileChangeMonitor(watching: files, backend: SQLiteProvider.backend, onChange: onChange)
        } catch {
            // Out of inotify watches, for example: a `stat` poll still notices every commit.
            monitor = try FileChangeMonitor(
                watching: files, strategy: .polling(interval: .milliseconds(100)), backend: SQLiteProvider.backend,
                onChange: onChange)
        }
        let now = Self.now()
        do {
            startPosition = try connection.lease(until: now + SQLiteChangeLog.leaseSeconds)
        } catch {
            monitor.cancel()
            throw error
        }
        leaseEnd = now + SQLiteChangeLog.leaseSeconds
        let period = DispatchTimeInterval.seconds(Int(SQLiteChangeLog.leaseSeconds / 4))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "AnyDefaults.SQLiteChangeWatcher"))
        timer.schedule(deadline: .now() + period, repeating: period, leeway: .seconds(5))
        timer.setEventHandler(handler: onTimer)
        timer.resume()
    }

    /// Renews the lease if a quarter of it has passed, and notes whether it had lapsed.
    func keepLease() throws(DefaultsError) {
        let now = Self.now()
        guard now >= leaseEnd - SQLiteChangeLog.leaseSeconds * 3 / 4 else { return }
        // Writers compare the lease with whole seconds of their own clock: a second of margin.
        let hadLapsed = now + 1 >= leaseEnd
        _ = try connection.lease(until: now + SQLiteChangeLog.leaseSeconds)
        leaseEnd = now + SQLiteChangeLog.leaseSeconds
        if hadLapsed { lapsed = true }
    }

    /// Stops the watch and the timer, gives the lease back and closes the connection. A call of
    /// `onChange` or `onTimer` already queued may still arrive. Calling it again does nothing.
    func stop() {
        timer.cancel()
        monitor.cancel()
        if connection.isOpen {
            // If it cannot be given back now, it lapses within the lease's length.
            try? connection.releaseLease()
            connection.close()
        }
    }

    deinit { stop() }

    private static func now() -> Int64 { Int64(time(nil)) }
}
