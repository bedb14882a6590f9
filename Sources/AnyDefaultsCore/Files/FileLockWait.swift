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
    private let deadline: ContinuousClock.Instant
    /// Microseconds before the next try: from 10 µs (a lock held for one commit is free again in
    /// microseconds) doubling to `longestPause` (a lock held for long costs no spinning).
    private var nextPause: UInt32 = 10
    private let longestPause: UInt32

    package init(timeout: Duration, longestPause: Duration = .milliseconds(10)) {
        // Bounded, so that no deadline overflows.
        deadline = ContinuousClock.now.advanced(by: min(max(timeout, .zero), .seconds(365 * 86_400)))
        self.longestPause = UInt32(clamping: max(10, longestPause.clampedNanoseconds / 1_000))
    }

    /// Waits before the next try; `false` once the timeout has passed (give up).
    package mutating func pause() -> Bool {
        guard ContinuousClock.now < deadline else { return false }
        usleep(nextPause)
        nextPause = min(nextPause * 2, longestPause)
        return true
    }

    /// Waits before the next try, or throws `busy` with `message` once the timeout has passed.
    package mutating func pause(orBusy message: @autoclosure () -> String, backend: String, path: String) throws(DefaultsError) {
        guard pause() else { throw DefaultsError(.busy, message(), backend: backend, path: path) }
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
