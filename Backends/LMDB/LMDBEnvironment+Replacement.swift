import AnyDefaultsCore
import CLMDB
import Foundation

import AnyDefaultsPlatform

/// The data file replaced under a running store (a backup renamed over `data.mdb`).
///
/// LMDB finds `lock.mdb` by name, and its table (the last transaction, the readers) describes
/// whichever data file the processes that share it have open. A process that opened the new
/// `data.mdb` with the old one's lock table would take the wrong meta page for the newest one.
/// So the counter file records which data file the lock file belongs to
/// (``AnyDefaultsCore/SharedChangeCounter/storeIdentity``): an environment opens only once no other
/// process uses a lock file of another data file (LMDB then starts the table afresh), and a
/// running environment that finds the data file replaced (checked on every write, at most every
/// 50 ms on reads, at once by the watch) closes and opens the directory again.
extension LMDBEnvironment {
    /// How often a read checks the data file at most.
    static let readCheckInterval: UInt64 = 50_000_000

    /// Waits, up to `timeout`, until the lock file beside the data file belongs to it: recorded
    /// for it (or for nothing yet), or used by no other process (its users had another data file
    /// open, and will open the directory again once they notice). Returns the identity recorded,
    /// for the open to replace.
    static func claimLockFile(path: String, counter: SharedChangeCounter, timeout: Duration) throws(DefaultsError) -> UInt64 {
        var wait = FileLockWait(timeout: timeout, longestPause: .milliseconds(1))
        while true {
            guard let recorded = counter.storeIdentity else { return 0 }
            let current = identity(atPath: path + "/data.mdb")
            // Every environment keeps a read lock on the lock file's first byte. (The probe closes
            // the file, which drops this process's locks on it: no environment of this process has
            // it open now, one per directory, closed before it is opened again.)
            if recorded == 0 || recorded == current || !FileLockProbe.isLockedByAnotherProcess(path + "/lock.mdb", byte: 0) { return recorded }
            try wait.pause(
                orBusy: "The store's data file was replaced while another process had it open, and that process still uses the "
                    + "replaced file's lock file (lock.mdb); it lets go once it notices. Nothing was changed.",
                backend: LMDBProvider.backend, path: path)
        }
    }

    /// The identity of the file at `path`, or 0 if there is none.
    static func identity(atPath path: String) -> UInt64 {
        FileID(path: path).map(SharedChangeCounter.identity) ?? 0
    }

    /// The identity of the data file the environment `pointer` has open.
    static func dataFileIdentity(_ pointer: OpaquePointer, path: String) throws(DefaultsError) -> UInt64 {
        var fd: mdb_filehandle_t = -1
        let rc = mdb_env_get_fd(pointer, &fd)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "inspect the data file", path: path) }
        guard let file = FileID(descriptor: fd) else { throw DefaultsError.lmdb(errno, "inspect the data file", path: path) }
        return SharedChangeCounter.identity(file)
    }

    /// Whether the open data file has no name left (renamed over, or deleted): one `fstat`.
    var dataFileIsUnlinked: Bool {
        var info = stat()
        let descriptor = handle.dataDescriptor.load(ordering: .acquiring)
        return descriptor >= 0 && fstat(descriptor, &info) == 0 && info.st_nlink == 0
    }

    /// Checks that the data file under the path is still the one open, and opens it again if it
    /// was replaced: on every write (`always`) by the open file's link count (a file renamed over
    /// or deleted has none left, and `fstat` costs much less than looking the path up), and by
    /// looking the path up at most every 50 ms (which also finds a replaced file that another hard
    /// link keeps), on reads too. Throws `notFound` when there is none any more (deleted or moved
    /// away: writing on would lose the writes).
    @inline(__always)
    func checkDataFile(always: Bool) throws(DefaultsError) {
        let now = CoarseClock.nanoseconds
        if now &- dataFileCheckedAt.load(ordering: .relaxed) >= Self.readCheckInterval {
            dataFileCheckedAt.store(now, ordering: .relaxed)
        } else {
            guard always else { return }
            var info = stat()
            let descriptor = handle.dataDescriptor.load(ordering: .acquiring)
            guard descriptor < 0 || fstat(descriptor, &info) != 0 || info.st_nlink == 0 else { return }
        }
        let current = Self.identity(atPath: dataFilePath)
        guard current != handle.dataFile.load(ordering: .acquiring) else { return }
        guard current != 0 else {
            throw DefaultsError(
                .notFound,
                "The store's data file was deleted or moved away while the store was open; put it back, or open the store again to create a new one.",
                backend: LMDBProvider.backend, path: path)
        }
        try reopen()
    }

    /// Closes the environment and opens the directory again, after its data file was replaced:
    /// the watch stops (its lease was on the replaced file) and starts again, the caches forget
    /// what they held, and observers hear what differs between the two files. If the new file
    /// cannot be opened yet (the directory removed, and not made again yet), calls fail with
    /// `busy` until one can, observers hear every key removed, and a watched environment tries
    /// again every 100 ms, so that they hear the store at the path once there is one.
    func reopen() throws(DefaultsError) {
        let watched = watching.withLock { $0?.scheme }
        let pending = following.withLock { $0 }
        let scheme = watched ?? pending?.scheme
        // What observers last heard of: the open file's values (still readable, even deleted).
        var before = pending?.values
        if before == nil, let scheme, isObserved { before = allValues(scheme) }
        stopWatching()
        do throws(DefaultsError) {
            try openAgain()
        } catch {
            if let scheme {
                let first = following.withLock { state in
                    defer { state = LMDBFollowing(scheme: scheme, values: [:]) }
                    return state == nil
                }
                if first { report(from: before ?? [:], to: [:]) }
                retryLater()
            }
            throw error
        }
        following.withLock { $0 = nil }
        if let scheme {
            watch(scheme: scheme)
            if let before, let after = allValues(scheme) { report(from: before, to: after) }
        }
    }

    /// Whether the environment is closed because opening it again after a replacement failed
    /// (the store's directory was removed, say): calls fail until it opens.
    var isClosedForReplacement: Bool { handle.dataFile.load(ordering: .acquiring) == 0 }

    private func openAgain() throws(DefaultsError) {
        try writer.withLock { (state: inout WriterState) throws(DefaultsError) in
            // Another thread may have opened it again meanwhile (0: closed, a reopen failed).
            let open = handle.dataFile.load(ordering: .acquiring)
            guard open == 0 || Self.identity(atPath: path + "/data.mdb") != open else { return }
            let outcome = gate.exclusive(takingPool: true) { pooled -> Result<Void, DefaultsError> in
                for transaction in pooled { mdb_txn_abort(transaction) }
                if let pointer = handle.pointer { mdb_env_close(pointer) }
                handle.pointer = nil
                handle.dataFile.store(0, ordering: .releasing)
                handle.dataDescriptor.store(-1, ordering: .releasing)
                handle.reservedMapSize.store(0, ordering: .relaxed)
                do throws(DefaultsError) {
                    let opened = try Self.openEnvironment(path: path, options: options, maximumMapSize: maximumMapSize, counter: changeCounter)
                    handle.pointer = opened.pointer
                    handle.dataFile.store(opened.dataFile, ordering: .releasing)
                    var descriptor: mdb_filehandle_t = -1
                    if mdb_env_get_fd(opened.pointer, &descriptor) == MDB_SUCCESS {
                        handle.dataDescriptor.store(descriptor, ordering: .releasing)
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            state = WriterState(syncIsOff: options.durability != .synced)
            changeCounter.invalidateAll()
            try outcome?.get()
        }
        try prepareStore()
    }

    private func allValues(_ scheme: LMDBKeyScheme) -> [String: DefaultsValue]? {
        try? read { transaction throws(DefaultsError) in try transaction.allValues(scheme: scheme) }
    }

    /// Tells observers, as external changes, how `after` differs from `before` (off the calling
    /// thread: a caller reading through a cache must not run observers' handlers).
    private func report(from before: [String: DefaultsValue], to after: [String: DefaultsValue]) {
        let events = DefaultsChangeEvent.differences(from: before, to: after)
        let broadcasters = writer.withLock { _ in listeners.enqueue(events, from: nil) }
        guard !broadcasters.isEmpty else { return }
        DispatchQueue.global().async { for broadcaster in broadcasters { broadcaster.deliverPending() } }
    }

    /// Tries to open the store at the path again in a moment, while it is followed.
    private func retryLater() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self, self.following.withLock({ $0 != nil }) else { return }
            guard Self.identity(atPath: self.dataFilePath) != 0 else { return self.retryLater() }
            try? self.reopen()
        }
    }
}

/// An LMDB environment whose data file went away while it was watched: what to start again once
/// the store at the path can be opened.
struct LMDBFollowing: Sendable {
    var scheme: LMDBKeyScheme
    /// The values observers last heard of (none: they heard every key removed).
    var values: [String: DefaultsValue]
}

/// The cause of the error a write throws when the data file was replaced while it waited for the
/// write lock; the provider then opens the new file and writes there.
struct LMDBDataFileReplaced: Error, CustomStringConvertible {
    var description: String { "the data file was replaced while the write waited" }
}
