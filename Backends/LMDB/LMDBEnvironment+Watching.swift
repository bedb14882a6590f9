import AnyDefaultsCore
import CLMDB

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
    /// Starts watching for other processes' commits, unless already watching. If the lease cannot
    /// be taken (the store is closed, or full), the next observer tries again; until then other
    /// processes' changes are read by every call but not reported.
    func watch(scheme: LMDBKeyScheme) {
        watching.withLock { watching in
            guard watching == nil else { return }
            do throws(DefaultsError) {
                // The watch starts before the lease, so that no commit logged under it goes unnoticed.
                let watch = try ChangeLog.Watch(
                    files: [path + "/data.mdb"], backend: LMDBProvider.backend,
                    onChange: { [weak self] in self?.readOtherProcessesCommits() },
                    onTimer: { [weak self] in self?.readOtherProcessesCommits() })
                let now = ChangeLog.now
                do throws(DefaultsError) {
                    try takeLease(until: now + ChangeLog.leaseSeconds, settingPosition: true)
                } catch {
                    watch.cancel()
                    throw error
                }
                // Read from the start: a commit may have come after the lease.
                watching = LMDBWatching(watch: watch, lease: ChangeLog.Lease(takenAt: now), scheme: scheme, seenTransaction: -1)
            } catch {
                return
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
        let broadcasters = watching.withLock { watching -> [ChangeBroadcaster] in
            guard var current = watching else { return [] }
            defer { watching = current }
            try? current.lease.keep { end throws(DefaultsError) in try takeLease(until: end, settingPosition: false) }
            // Most wake-ups are this process's own commits: only a new transaction can log anything.
            // (The last transaction is read from the meta page, which a commit writes before it is
            // visible to new readers: the snapshot read below may still be the one before.)
            guard let last = lastTransaction, current.lease.lapsed || last != current.seenTransaction else { return [] }
            return writer.withLock { state -> [ChangeBroadcaster] in
                guard let start = state.logPosition else { return [] }
                let observed = listeners.withLock { $0.broadcasters.values.contains(where: \.hasObservers) }
                let trusted = !current.lease.lapsed
                let scheme = current.scheme
                guard
                    let (events, end, snapshot) = try? read({ transaction throws(DefaultsError) in
                        // Unobserved, only the position moves: no one would receive events.
                        let (events, end) =
                            observed
                            ? try transaction.externalEvents(after: start, trusted: trusted, scheme: scheme)
                            : ([], try transaction.logEnd())
                        return (events, end, Int(mdb_txn_id(transaction.pointer)))
                    })
                else { return [] }
                state.logPosition = end
                current.seenTransaction = snapshot
                current.lease.lapsed = false
                return enqueue(events, [], from: nil)
            }
        }
        for broadcaster in broadcasters { broadcaster.deliverPending() }
    }

    /// Takes or renews this process's lease until `end` in a write transaction; with
    /// `settingPosition`, makes the log's end the position this process has accounted for: every
    /// commit after it is logged while the lease lasts.
    private func takeLease(until end: Int64, settingPosition: Bool) throws(DefaultsError) {
        try writer.withLock { (state: inout WriterState) throws(DefaultsError) in
            let logEnd = try commitWithGrowth(estimatedSize: 64) { transaction throws(DefaultsError) -> Int64 in
                try transaction.putLease(origin: ChangeLog.processOrigin, until: end, now: ChangeLog.now)
                return try transaction.logEnd()
            }
            if settingPosition { state.logPosition = logEnd }
        }
    }
}
