import AnyDefaultsCore

import AnyDefaultsPlatform

/// A lock that every AnyDefaults process takes around its LMDB write transactions, waiting for it
/// at most the lock timeout: an `flock` on the store's directory.
///
/// LMDB's own write lock is a mutex in `lock.mdb` with no timeout, so a writer stopped (SIGSTOP,
/// a debugger) while it holds it would block every other writer forever; a writer that died is
/// no problem (the mutex is robust). Taken before LMDB's, this lock bounds the wait: a writer that
/// cannot get it within ``LMDBProvider/Options-swift.struct/lockTimeout`` fails with `busy` and
/// never reaches LMDB's mutex. A holder that works is waited for past the timeout
/// (`FileLockWait.pause(lockOn:)`, `LockHolderPatience`): one that was killed, whose lock is free
/// once the kernel has closed its files (under load that can take seconds), and one that commits
/// back to back, whose short releases a polling waiter can miss for seconds. (A program that writes with liblmdb directly does not take
/// it; a writer of such a program stopped while holding LMDB's lock still blocks ours.)
///
/// An `flock` belongs to the open file description, so the threads of this process share it: they
/// take turns under the environment's writer lock.
struct LMDBWriteLock: Sendable {
    /// The store's directory, opened once.
    let descriptor: Int32
    let path: String

    init(directory path: String) throws(DefaultsError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw DefaultsError.lmdb(errno, "open the store's directory", path: path) }
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes the lock, waiting (from 10 µs, doubling to 1 ms between tries) at most `timeout`, or
    /// longer while the holder works (`LockHolderPatience`).
    /// Returns whether it had to wait (the store may have changed in ways a write must check
    /// again, such as its data file replaced).
    @discardableResult
    func acquire(timeout: Duration) throws(DefaultsError) -> Bool {
        // A free lock, the usual case, takes one try and none of the wait's bookkeeping (a few
        // hundred instructions of every commit).
        if try tryLock() { return false }
        // Commits hold the lock for microseconds: a waiter looks again at least every millisecond.
        var wait = FileLockWait(timeout: timeout, longestPause: .milliseconds(1))
        while true {
            try wait.pause(
                lockOn: descriptor,
                orBusy: "Another process kept the store locked for writing beyond the lock timeout "
                    + "of \(timeout) (locktimeout=SECONDS in a store string, LMDBProvider.Options.lockTimeout in code); it may be stopped.",
                backend: LMDBProvider.backend, path: path)
            if try tryLock() { return true }
        }
    }

    private func tryLock() throws(DefaultsError) -> Bool {
        do throws(SystemCallError) {
            return try FileLockWait.tryLock(descriptor, path: path)
        } catch {
            throw DefaultsError.lmdb(error.number, "lock the store for writing", path: path)
        }
    }

    func release() {
        _ = flock(descriptor, LOCK_UN)
    }

    /// Closes the directory (which releases the lock).
    func closeDirectory() {
        _ = close(descriptor)
    }
}
