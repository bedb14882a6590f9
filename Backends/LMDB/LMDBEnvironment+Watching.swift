import AnyDefaultsCore
import CLMDB
import Dispatch

/// The watch for other processes' commits to an environment, while this process has one: a
/// lease on the change log (which makes other processes log their changes, ``LMDBChangeLog``),
/// a watch on `data.mdb` (every commit writes to it; `lock.mdb` is only mapped), and what was
/// last seen.
struct LMDBWatching {
    let watch: ChangeLog.Watch
    var lease: ChangeLog.Lease
    /// The key scheme of the provider that started the watch, for reading values.
    let scheme: LMDBKeyScheme
    /// The ID of the snapshot the log was last read in: while the environment's last transaction
    /// is still that one, nothing has been committed since.
    var seenTransaction: Int
}

extension LMDBEnvironment {
    /// Starts watching for other processes' commits, unless already watching. The lease is taken
    /// without waiting for the write lock: while another process holds it (a long transaction, a
    /// stopped writer), the watch starts without one and takes it as soon as it can, trying again
    /// every 100 ms to 1 s; its first reading then reports every key, as other processes did not
    /// log their changes meanwhile. If the watch cannot start (the store is closed), the next
    /// observer tries again.
    func watch(scheme: LMDBKeyScheme) {
        let pending = watching.withLock { watching -> Bool in
            guard watching == nil else { return false }
            do throws(DefaultsError) {
                // The watch starts before the lease, so that no commit logged under it goes unnoticed.
                let watch = try ChangeLog.Watch(
                    files: [path + "/data.mdb"], backend: LMDBProvider.backend,
                    onChange: { [weak self] in self?.readOtherProcessesCommits() },
                    onTimer: { [weak self] in self?.readOtherProcessesCommits() })
                let now = ChangeLog.now
                var lease = ChangeLog.Lease(takenAt: now)
                do throws(DefaultsError) {
                    try takeLease(until: now + ChangeLog.leaseSeconds, settingPosition: true)
                } catch where error.code == .busy {
                    lease = ChangeLog.Lease.untaken(at: now)
                } catch {
                    watch.cancel()
                    throw error
                }
                // Read from the start: a commit may have come after the lease.
                watching = LMDBWatching(watch: watch, lease: lease, scheme: scheme, seenTransaction: -1)
                return lease.lapsed
            } catch {
                return false
            }
        }
        if pending {
            ChangeLog.Lease.retryUntilTaken { [weak self] in
                guard let self else { return false }
                readOtherProcessesCommits()
                return watching.withLock { $0.map { $0.lease.isUntaken } ?? false }
            }
        }
    }

    /// Stops the watch and gives the lease back (if that fails, the lease lapses on its own).
    func stopWatching() {
        watching.withLock { watching in
            guard let current = watching else { return }
            current.watch.cancel()
            _ = try? writer.withLock { _ throws(DefaultsError) in
                try commitWithGrowth(estimatedSize: 0) { transaction throws(DefaultsError) in
                    try transaction.deleteLease(origin: ChangeLog.processOrigin)
                }
            }
            writer.withLock { $0.logPosition = nil }
            watching = nil
        }
    }

    /// Renews the lease if it is due, and reads and reports what other processes logged since the
    /// position. Failures (the store closed meanwhile, or full) are retried on the next change or
    /// tick of the watch.
    private func readOtherProcessesCommits() {
        // The watch also wakes when the data file is replaced: open the new one at once.
        if Self.identity(atPath: path + "/data.mdb") != handle.dataFile.load(ordering: .acquiring) {
            try? reopen()
            return
        }
        for broadcaster in readChangeLog().broadcasters { broadcaster.deliverPending() }
    }

    /// Catches up with every commit other processes made so far, for the caches (see
    /// `SharedChangeCounter`): reads the change log at once and tells them what changed. The
    /// events are delivered on another thread, as a caller reading through a cache must not run
    /// observers' handlers. Returns whether the log could tell (this process watches and read it).
    func catchUpWithOtherProcesses() -> Bool {
        let (broadcasters, caughtUp) = readChangeLog()
        if !broadcasters.isEmpty {
            DispatchQueue.global().async { for broadcaster in broadcasters { broadcaster.deliverPending() } }
        }
        return caughtUp
    }

    /// Renews the lease if it is due, then reads what other processes logged after the position:
    /// tells the caches and queues the events. Returns the broadcasters to deliver them, and
    /// whether every commit made before the call is now accounted for.
    private func readChangeLog() -> (broadcasters: [ChangeBroadcaster], caughtUp: Bool) {
        watching.withLock { watching -> (broadcasters: [ChangeBroadcaster], caughtUp: Bool) in
            guard var current = watching else { return ([], false) }
            defer { watching = current }
            try? current.lease.keep { end throws(DefaultsError) in try takeLease(until: end, settingPosition: false) }
            // Without a lease (not taken yet), other processes log nothing to read.
            guard !current.lease.isUntaken else { return ([], false) }
            // Most wake-ups are this process's own commits: only a new transaction can log anything.
            // (The last transaction is read from the meta page, which a commit writes before it is
            // visible to new readers: the snapshot read below may still be the one before.)
            guard let last = lastTransaction else { return ([], false) }
            guard current.lease.lapsed || last != current.seenTransaction else { return ([], true) }
            return writer.withLock { state -> (broadcasters: [ChangeBroadcaster], caughtUp: Bool) in
                guard let start = state.logPosition else { return ([], false) }
                let observed = isObserved
                let trusted = !current.lease.lapsed
                let scheme = current.scheme
                guard
                    let (reading, snapshot) = try? read({ transaction throws(DefaultsError) in
                        // Unobserved, only the position moves: no one would receive events.
                        let reading =
                            observed
                            ? try transaction.externalEvents(after: start, trusted: trusted, scheme: scheme)
                            : ChangeLog.Report(events: [], end: try transaction.logEnd(), complete: true)
                        return (reading, Int(mdb_txn_id(transaction.pointer)))
                    })
                else { return ([], false) }
                reading.invalidate(in: changeCounter)
                state.logPosition = reading.end
                current.seenTransaction = snapshot
                current.lease.lapsed = false
                return (listeners.enqueue(reading.events, from: nil), true)
            }
        }
    }

    /// Takes or renews this process's lease until `end` in a write transaction; with
    /// `settingPosition` (or when none is set yet), makes the log's end the position this process
    /// has accounted for: every commit after it is logged while the lease lasts. It never waits
    /// for another process's write lock (`busy` then): it runs while observers start and while
    /// readers catch up, which must not wait on a stopped writer; the watch tries again later.
    private func takeLease(until end: Int64, settingPosition: Bool) throws(DefaultsError) {
        try writer.withLock { (state: inout WriterState) throws(DefaultsError) in
            let logEnd = try commitWithGrowth(estimatedSize: 64, lockTimeout: .zero) { transaction throws(DefaultsError) -> Int64 in
                try transaction.putLease(origin: ChangeLog.processOrigin, until: end, now: ChangeLog.now)
                return try transaction.logEnd()
            }
            if settingPosition || state.logPosition == nil { state.logPosition = logEnd }
        }
    }
}
