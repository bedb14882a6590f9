import AnyDefaultsPlatform

/// Taking an exclusive `flock` that another process may hold, within a timeout: the one way every
/// backend waits for another process's lock (the JSON file's sidecar, the preferences directory,
/// LMDB's writer lock) or for another process to let go of a replaced store's files (SQLite's
/// `-wal`, LMDB's `lock.mdb`).
///
/// ```swift
/// var wait = FileLockWait(timeout: .seconds(5))
/// while try !FileLockWait.tryLock(descriptor, path: path) {
///     guard wait.pause() else { throw busy }
/// }
/// ```
package struct FileLockWait {
    /// How long past its timeout a wait goes on at most for holders that are working (see
    /// ``pause(lockOn:)``): a dying holder's exit has to be through in that time, and others'
    /// commits have to leave this waiter a turn.
    package static let holderPatienceLimit = Duration.seconds(30)

    private let timeout: Duration
    private var deadline: ContinuousClock.Instant
    private var patience = LockHolderPatience()
    /// Microseconds before the next try: from 10 µs (a lock held for one commit is free again in
    /// microseconds) doubling to `longestPause` (a lock held for long costs no spinning).
    private var nextPause: UInt32 = 10
    private let longestPause: UInt32

    package init(timeout: Duration, longestPause: Duration = .milliseconds(10)) {
        // Bounded, so that no deadline overflows.
        self.timeout = min(max(timeout, .zero), .seconds(365 * 86_400))
        deadline = ContinuousClock.now.advanced(by: self.timeout)
        self.longestPause = UInt32(clamping: max(10, longestPause.clampedNanoseconds / 1_000))
    }

    /// Waits before the next try; `false` once the timeout has passed (give up).
    package mutating func pause() -> Bool {
        guard ContinuousClock.now < deadline else { return false }
        sleepBeforeNextTry()
        return true
    }

    /// ``pause()`` for a wait on the `flock` of `descriptor`, which gives up at the timeout only
    /// on a holder that is stuck: past it, the wait goes on while the holders work
    /// (``LockHolderPatience``).
    package mutating func pause(lockOn descriptor: Int32) -> Bool {
        let now = ContinuousClock.now
        if now >= deadline {
            guard let next = patience.deadline(at: now, timeout: timeout, look: { FileLockHolder.look(atLockOn: descriptor) })
            else { return false }
            deadline = next
        }
        sleepBeforeNextTry()
        return true
    }

    private mutating func sleepBeforeNextTry() {
        usleep(nextPause)
        nextPause = min(nextPause * 2, longestPause)
    }

    /// Waits before the next try, or throws `busy` with `message` once the timeout has passed: as
    /// ``pause(lockOn:)`` for a wait on the `flock` of `descriptor`, else as ``pause()``.
    package mutating func pause(
        lockOn descriptor: Int32? = nil, orBusy message: @autoclosure () -> String, backend: String, path: String
    ) throws(DefaultsError) {
        let waiting = if let descriptor { pause(lockOn: descriptor) } else { pause() }
        guard waiting else { throw DefaultsError(.busy, message(), backend: backend, path: path) }
    }

    /// Tries once to take the exclusive lock on `descriptor`: `true` if taken, `false` if another
    /// holder has it; any other failure is thrown (an interrupted call is tried again).
    package static func tryLock(_ descriptor: Int32, path: String) throws(SystemCallError) -> Bool {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = SystemCallError.last("flock", path: path)
            if failure.number == EINTR { continue }
            guard failure.number == EWOULDBLOCK || failure.number == EAGAIN else { throw failure }
            return false
        }
        return true
    }
}

/// The rule for a lock whose holders keep it past the timeout, shared by every wait for another
/// process's lock (``FileLockWait``, SQLite's busy handler).
///
/// The timeout is for a holder that is stuck: stopped (SIGSTOP, a debugger), or keeping the lock
/// without doing anything. Past it, the wait goes on while the holders work, looked at again every
/// `min(timeout, 1 s)` (at least 10 ms; ``FileLockHolder``):
///
/// - one of them is dying, or was at an earlier look (killed: its lock is free once its exit is
///   through);
/// - or none is stopped, and one is on a CPU or waiting for the disk, or they used CPU time, or
///   the lock changed hands, since the last look (the first look counts as working);
/// - or the lock has no holder at that moment (it was just let go): the wait tries again at once
///   (but not after ``freeLookLimit`` such looks in a row: then what holds it cannot be seen).
///
/// At most ``FileLockWait/holderPatienceLimit`` past the moment the timeout first passed. A zero
/// timeout waits for a dying holder only (looked at twice, a millisecond apart). Where the system
/// does not tell (no `/proc`, a holder in another PID namespace, a holder in this process), the
/// wait ends at the timeout.
package struct LockHolderPatience: Sendable {
    private var end: ContinuousClock.Instant?
    private var previous: FileLockHolder.Look?
    /// Looks in a row that found the lock free.
    private var freeLooks = 0
    /// The holders seen dying so far.
    private var dying: Set<pid_t> = []
    /// Whether a zero timeout's second look was taken.
    private var secondLook = false
    /// How many looks in a row may find the lock free, yet not to be had, before the wait ends.
    static let freeLookLimit = 8

    package init() {}

    /// At `now`, past the deadline: the next deadline, or `nil` to give up. `look` looks at the
    /// holders.
    package mutating func deadline(
        at now: ContinuousClock.Instant, timeout: Duration, look: () -> FileLockHolder.Look?
    ) -> ContinuousClock.Instant? {
        let end = self.end ?? now.advanced(by: FileLockWait.holderPatienceLimit)
        guard now < end, let seen = look() else { return nil }
        defer { previous = seen }
        // Once dying, always dying: a thread that has taken its SIGKILL but not yet begun to
        // exit shows neither, for a moment.
        dying.formUnion(seen.dyingHolders)
        freeLooks = seen.holders.isEmpty ? freeLooks + 1 : 0
        let interval: Duration
        if seen.holders.isEmpty {
            // Free at that moment (its holder just let go): try again at once. Free at look after
            // look, yet not to be had: what holds it cannot be seen (this process's own).
            guard freeLooks <= Self.freeLookLimit else { return nil }
            interval = .zero
        } else if !seen.holders.isDisjoint(with: dying) {
            interval = Self.lookInterval(timeout)
        } else if timeout <= .zero {
            // Only a dying holder is waited for. A look can catch a killed one at the moment a
            // thread has taken its SIGKILL and not yet begun to exit: a second look, a millisecond
            // later, decides.
            guard !seen.stopped, !secondLook else { return nil }
            secondLook = true
            interval = .milliseconds(1)
        } else {
            guard !seen.stopped else { return nil }
            let working = seen.running || previous.map { $0.holders != seen.holders || $0.cpuTicks != seen.cpuTicks } ?? true
            guard working else { return nil }
            interval = Self.lookInterval(timeout)
        }
        self.end = end
        return min(now.advanced(by: interval), end)
    }

    /// How long until the next look: `min(timeout, 1 s)`, and at least 10 ms, so that a short
    /// timeout does not read `/proc` at every try (the lock is tried as often as before).
    private static func lookInterval(_ timeout: Duration) -> Duration {
        min(max(timeout, .milliseconds(10)), .seconds(1))
    }
}
