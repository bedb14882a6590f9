import AnyDefaultsCore
import AnyDefaultsPlatform

/// The busy handler of a connection: while another connection (in this process or another) holds
/// the lock SQLite needs, it waits and retries instead of failing with "database is locked", for up
/// to the provider's busy timeout.
///
/// SQLite's built-in `sqlite3_busy_timeout` sleeps in steps of up to 100 ms, so under steady
/// contention a waiter keeps missing short gaps between other writers' transactions. This handler
/// starts at 10 µs and doubles up to 2 ms, which keeps waiters close behind a lock that is held
/// for microseconds (a synchronous NORMAL commit) without spinning when it is held for longer.
///
/// The timeout is for a holder that is stuck (stopped, or keeping the lock without doing
/// anything): past it, while the processes holding exclusive locks on the store's `-shm` work (one
/// is dying, or running, or the locks changed hands: `LockHolderPatience`), the wait goes on, at most
/// `FileLockWait.holderPatienceLimit` past the first timeout. A killed holder keeps SQLite's locks
/// until the kernel has closed its files, which can take seconds under load; writers that commit
/// again and again can leave a polling waiter no gap for seconds under load.
struct SQLiteBusyWait {
    /// The connection's busy timeout; ``SQLiteConnection/withoutWaiting(_:)`` sets it to zero for
    /// a moment.
    var timeout: Duration
    /// The store's shared-memory index, where SQLite keeps its locks in WAL mode.
    let lockFile: String
    /// When the wait gives up, unless the holders are working then.
    private var deadline: UInt64 = 0
    /// Set once the timeout passed while the holders were working.
    private var patience: LockHolderPatience?

    init(timeout: Duration, store path: String) {
        self.timeout = timeout
        lockFile = path + "-shm"
    }

    /// The callback registered with `sqlite3_busy_handler`; `context` points to the connection's
    /// `SQLiteBusyWait`. Returns 1 to retry, 0 to give up (SQLite then reports SQLITE_BUSY).
    static let handler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, attempt in
        guard let wait = context?.assumingMemoryBound(to: SQLiteBusyWait.self) else { return 0 }
        return wait.pointee.pause(attempt: attempt) ? 1 : 0
    }

    /// Waits before the next try; `false` to give up.
    private mutating func pause(attempt: Int32) -> Bool {
        let now = Self.monotonicNanoseconds()
        // `attempt` counts the calls for this one lock, so 0 starts a new wait.
        if attempt == 0 { (deadline, patience) = (now &+ timeout.clampedNanoseconds, nil) }
        if now >= deadline {
            var extended = patience ?? LockHolderPatience()
            let clock = ContinuousClock.now
            guard let next = extended.deadline(at: clock, timeout: timeout, look: { FileLockHolder.look(atHoldersOfLocksOn: lockFile) })
            else { return false }
            patience = extended
            deadline = now &+ (next - clock).clampedNanoseconds
        }
        let step: UInt64 = min(10_000 << UInt64(min(attempt, 8)), 2_000_000)
        // Waiting past the timeout, a zero timeout must not make it spin.
        Self.sleep(nanoseconds: patience == nil ? min(step, deadline &- now) : step)
        return true
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
