import AnyDefaultsPlatform

/// The busy handler of a connection: while another connection (in this process or another) holds
/// the lock SQLite needs, it waits and retries instead of failing with "database is locked", for up
/// to the provider's busy timeout.
///
/// SQLite's built-in `sqlite3_busy_timeout` sleeps in steps of up to 100 ms, so under steady
/// contention a waiter keeps missing short gaps between other writers' transactions. This handler
/// starts at 10 µs and doubles up to 2 ms, which keeps waiters close behind a lock that is held
/// for microseconds (a synchronous NORMAL commit) without spinning when it is held for longer.
struct SQLiteBusyWait {
    let timeoutNanoseconds: UInt64
    private var startedAt: UInt64 = 0

    init(timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        let (whole, overflow) = max(0, seconds).multipliedReportingOverflow(by: 1_000_000_000)
        timeoutNanoseconds = overflow ? .max : UInt64(whole) + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// The callback registered with `sqlite3_busy_handler`; `context` points to the connection's
    /// `SQLiteBusyWait`. Returns 1 to retry, 0 to give up (SQLite then reports SQLITE_BUSY).
    static let handler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, attempt in
        guard let wait = context?.assumingMemoryBound(to: SQLiteBusyWait.self) else { return 0 }
        let now = monotonicNanoseconds()
        // `attempt` counts the calls for this one lock, so 0 starts a new wait.
        if attempt == 0 { wait.pointee.startedAt = now }
        let waited = now &- wait.pointee.startedAt
        guard waited < wait.pointee.timeoutNanoseconds else { return 0 }
        let step: UInt64 = 10_000 << UInt64(min(attempt, 8))
        sleep(nanoseconds: min(step, 2_000_000, wait.pointee.timeoutNanoseconds - waited))
        return 1
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Sleeps for `nanoseconds`, also when a signal interrupts the sleep.
    static func sleep(nanoseconds: UInt64) {
        var interval = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&interval, &remaining) != 0, errno == EINTR { interval = remaining }
    }
}
