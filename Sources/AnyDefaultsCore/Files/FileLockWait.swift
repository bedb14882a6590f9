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
    /// How long past its timeout a wait goes on for a holder that is dying (see
    /// ``pause(lockOn:)``): its exit has to be through in that time.
    package static let dyingHolderLimit = Duration.seconds(30)

    private let timeout: Duration
    private var deadline: ContinuousClock.Instant
    private var grace = DyingHolderGrace()
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

    /// ``pause()`` for a wait on the `flock` of `descriptor`, which does not count a dying holder
    /// against the timeout: past it, while the process holding the lock is dying (killed, or
    /// exiting: ``FileLockHolder/isDying(lockOn:)``), the wait goes on, and the timeout starts
    /// again, at most ``dyingHolderLimit`` past the first timeout. A killed holder keeps its lock
    /// until the kernel has closed its files, which can take seconds under load; it is not a
    /// stopped holder, which the timeout is for.
    package mutating func pause(lockOn descriptor: Int32) -> Bool {
        let now = ContinuousClock.now
        if now >= deadline {
            guard let limit = grace.limit(at: now, holderIsDying: { FileLockHolder.isDying(lockOn: descriptor) }) else { return false }
            deadline = min(now.advanced(by: timeout), limit)
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

/// The rule for a holder that is dying, shared by every wait for another process's lock
/// (``FileLockWait``, SQLite's busy handler): past the timeout, the wait goes on while the holder
/// is dying, at most ``FileLockWait/dyingHolderLimit`` past the moment the timeout first passed.
package struct DyingHolderGrace: Sendable {
    private var end: ContinuousClock.Instant?

    package init() {}

    /// At `now`, past the timeout: when the wait must end all the same if it goes on, or `nil` to
    /// give up (the holder is not dying, or the grace is over).
    package mutating func limit(at now: ContinuousClock.Instant, holderIsDying: () -> Bool) -> ContinuousClock.Instant? {
        let end = self.end ?? now.advanced(by: FileLockWait.dyingHolderLimit)
        guard now < end, holderIsDying() else { return nil }
        self.end = end
        return end
    }
}
