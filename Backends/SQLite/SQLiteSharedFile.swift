import AnyDefaultsCore
import Dispatch
import Synchronization

/// What the ``SQLiteProvider`` instances open on one store file in this process share: the order
/// of their commits, each other's observers, and the watch for other processes' commits.
///
/// Each instance has its own connection, so each reads what the others committed at once. This
/// object adds the events: a commit through one instance is reported to that instance's observers
/// as `.local` and to every other instance's observers as `.external`, all in commit order. That
/// lets a cache in front of one instance (`CachingProvider`) forget what another instance changed.
///
/// Commits of other processes are found in the store's change log (``SQLiteChangeLog``) by an
/// ``SQLiteChangeWatcher``, started when an instance is first observed and stopped when the last
/// instance is closed or released, and reported to every instance as `.external`. The log
/// position this process has accounted for moves only under the commit lock, and a write that
/// anyone observes first reports the other processes' commits it finds in the log (they came
/// before it), then its own: every instance hears of all commits in commit order.
final class SQLiteSharedFile: Sendable {
    private struct Member: Sendable {
        weak var broadcaster: ChangeBroadcaster?
        /// Closes the instance's connection unless a call is using it; returns whether it is
        /// closed (see ``retire()``).
        var closeIfIdle: @Sendable () -> Bool
        /// Has the instance open the store now at the path and tell its observers how it differs
        /// from the values given (those of the replaced file, if they could be read).
        var follow: @Sendable ([String: DefaultsValue]?) -> Void
    }

    /// The files open in this process.
    private static let open = SharedInstances<FileID, SQLiteSharedFile>()
    /// The change counters of the stores open in this process, by the store's path: one per path,
    /// kept across a replacement of the store file, so that the caches registered with it stay.
    private static let counters = SharedInstances<String, SharedChangeCounter>()

    /// The store file's absolute path.
    let path: String
    let id: FileID
    /// Set once the file under the path is no longer this one: every instance on it opens the
    /// path again before its next call.
    private let replacedFlag = Atomic<Bool>(false)

    /// The instances' broadcasters, by identity.
    private let members = Mutex<[ObjectIdentifier: Member]>([:])
    /// Held from the start of a write transaction (or a reading of the change log) until its
    /// events are queued, so that every instance queues events in commit order. Writers on one
    /// file take turns anyway (SQLite lets one write at a time); this makes those in one process
    /// wait here instead of in the busy handler. Holds the change-log position this process has
    /// accounted for, while it watches.
    private let commits = Mutex<Int64?>(nil)
    /// The watch for other processes' commits, while there is one. Taken before `commits`.
    private let watcher = Mutex<SQLiteChangeWatcher?>(nil)
    /// The count of every process's commits to the file (the file `<store>-counter` beside it),
    /// through which caches in front of its instances stay coherent with other processes.
    let changeCounter: SharedChangeCounter

    private init(id: FileID, path: String, changeCounter: SharedChangeCounter) {
        self.id = id
        self.path = path
        self.changeCounter = changeCounter
    }

    /// The change counter of the store at `path` (its file `<path>-counter`), shared by every
    /// file opened at that path in this process. `path` is a connection's, with its links already
    /// followed (`SQLiteStoreFile.prepare`), so every spelling of a store shares one counter.
    static func counter(forStore path: String) throws(DefaultsError) -> SharedChangeCounter {
        try counters.object(for: path) { () throws(DefaultsError) in
            try SharedChangeCounter(file: path + "-counter", backend: SQLiteProvider.backend, likeFile: path)
        }.object
    }

    /// Whether a connection of this process has the file `id` open.
    static func isOpen(_ id: FileID) -> Bool {
        open.openObject(for: id) != nil
    }

    /// The shared state of the file `id` at `path`, with one instance (its `broadcaster`, and how
    /// to close its connection for a replacement) added to it.
    static func join(
        _ id: FileID, path: String, broadcaster: ChangeBroadcaster, closeIfIdle: @escaping @Sendable () -> Bool,
        follow: @escaping @Sendable ([String: DefaultsValue]?) -> Void
    ) throws(DefaultsError) -> SQLiteSharedFile {
        let counter = try counter(forStore: path)
        let file = open.object(for: id, reusing: { !$0.isReplaced }) {
            let file = SQLiteSharedFile(id: id, path: path, changeCounter: counter)
            counter.onCatchUp { [weak file] in file?.catchUpWithOtherProcesses() ?? false }
            SQLiteReserve.ensure(forStore: path)
            return file
        }.object
        file.members.withLock { $0[ObjectIdentifier(broadcaster)] = Member(broadcaster: broadcaster, closeIfIdle: closeIfIdle, follow: follow) }
        return file
    }

    // MARK: Replacement

    /// Whether the file under the path is no longer this one (see ``retire()``).
    var isReplaced: Bool { replacedFlag.load(ordering: .acquiring) }

    /// Gives up this file, which is no longer the one under its path: marks it replaced (each
    /// instance opens the path again before its next call), stops the watch (which closes its
    /// connection), closes the instances' connections that no call is using, and makes the caches
    /// forget everything. Once this process's last connection to the file closes, SQLite copies
    /// its log into it and removes the log beside the path, where the new file can start afresh.
    /// Returns whether every connection to it is closed.
    @discardableResult
    func retire() -> Bool {
        replacedFlag.store(true, ordering: .releasing)
        watcher.withLock { watcher in
            watcher?.stop()
            watcher = nil
        }
        changeCounter.invalidateAll()
        return members.withLock { Array($0.values) }.allSatisfy { $0.closeIfIdle() }
    }

    /// Retires every file open in this process at `path` other than `id`; returns whether they
    /// have no open connection left.
    static func retireOthers(atPath path: String, keeping id: FileID) -> Bool {
        let others = open.openObjects.filter { $0.path == path && $0.id != id }
        return others.allSatisfy { $0.retire() }
    }

    /// Retires this file if the path names another file now (or none), and has the observed
    /// instances follow the store at the path; returns whether it did. Called by the watch, which
    /// wakes when the file is replaced, deleted, or its directory removed.
    private func retireIfReplaced() -> Bool {
        guard SQLiteStoreFile.identity(atPath: path) != id else { return false }
        // What observers knew: the replaced file, read through the watch's connection to it.
        let before = watcher.withLock { watcher in try? watcher?.connection.allValues() }
        retire()
        for member in members.withLock({ Array($0.values) }) where member.broadcaster?.hasObservers == true {
            member.follow(before)
        }
        return true
    }

    /// Removes an instance's broadcaster, when the instance is closed or goes away; the watch
    /// stops with the last instance. Calling it again does nothing.
    func leave(_ broadcaster: ChangeBroadcaster) {
        let isEmpty = members.withLock { members in
            members.removeValue(forKey: ObjectIdentifier(broadcaster))
            return members.isEmpty
        }
        guard isEmpty else { return }
        watcher.withLock { watcher in
            // Checked again under the lock: an instance may have joined meanwhile.
            guard members.withLock({ $0.isEmpty }) else { return }
            watcher?.stop()
            watcher = nil
            commits.withLock { $0 = nil }
        }
    }

    // MARK: Other processes

    /// Starts watching for other processes' commits, unless already watching; the watcher's own
    /// connection is opened with `synchronous` and `busyTimeout`. While another process holds the write lock, the
    /// watch starts without its lease and takes it as soon as it can, trying again every 100 ms to
    /// 1 s; its first reading then reports every key (other processes logged nothing meanwhile).
    /// If the store cannot be watched (damaged, say), the next observer tries again; until then
    /// other processes' changes are read by every call but not reported.
    func watch(path: String, synchronous: StaticString, busyTimeout: Duration) {
        let pending = watcher.withLock { watcher -> Bool in
            guard watcher == nil else { return false }
            guard
                let started = try? SQLiteChangeWatcher(
                    path: path, synchronous: synchronous, busyTimeout: busyTimeout,
                    onChange: { [weak self] in self?.readOtherProcessesCommits() },
                    onTimer: { [weak self] in self?.readOtherProcessesCommits() })
            else { return false }
            commits.withLock { $0 = started.startPosition }
            watcher = started
            return started.lease.isUntaken
        }
        if pending {
            ChangeLog.Lease.retryUntilTaken { [weak self] in
                guard let self else { return false }
                readOtherProcessesCommits()
                return watcher.withLock { $0?.lease.isUntaken ?? false }
            }
        }
    }

    /// Renews the lease if it is due, then reads the change log after the position and reports
    /// what other processes changed.
    private func readOtherProcessesCommits() {
        guard !retireIfReplaced() else { return }
        if readChangeLog().queued { deliverPending() }
    }

    /// Catches up with every commit other processes made so far, for the caches (see
    /// `SharedChangeCounter`): reads the change log at once and tells them what changed. The
    /// events are delivered on another thread, as a caller reading through a cache must not run
    /// observers' handlers. Returns whether the log could tell (this process watches and read it).
    func catchUpWithOtherProcesses() -> Bool {
        let (queued, caughtUp) = readChangeLog()
        if queued { DispatchQueue.global().async { [self] in deliverPending() } }
        return caughtUp
    }

    /// Renews the lease if it is due, then reads what other processes logged after the position:
    /// tells the caches and queues the events. Returns whether it queued any, and whether every
    /// commit made before the call is now accounted for.
    private func readChangeLog() -> (queued: Bool, caughtUp: Bool) {
        watcher.withLock { watcher -> (queued: Bool, caughtUp: Bool) in
            guard let watcher else { return (false, false) }
            // A failure (the store busy beyond the timeout, or damaged) is retried on the next
            // change or tick; a lease that lapsed meanwhile is noted then.
            try? watcher.keepLease()
            // Without a lease (not taken yet), other processes log nothing to read.
            guard !watcher.lease.isUntaken, let startPosition = watcher.startPosition else { return (false, false) }
            commits.withLock { if $0 == nil { $0 = startPosition } }
            // Most wake-ups are this process's own commits, which log nothing it reads.
            guard let end = try? watcher.connection.logEnd() else { return (false, false) }
            guard watcher.lease.lapsed || end != commits.withLock({ $0 }) else { return (false, true) }
            return commits.withLock { position -> (queued: Bool, caughtUp: Bool) in
                guard let start = position else { return (false, false) }
                let listeners = members.withLock { $0.values.compactMap(\.broadcaster) }
                // Unobserved, only the position moves: no one would receive events.
                guard listeners.contains(where: \.hasObservers) || changeCounter.hasCaches else {
                    position = end
                    watcher.lease.lapsed = false
                    return (false, true)
                }
                guard let reading = try? watcher.connection.logEvents(after: start, complete: !watcher.lease.lapsed)
                else { return (false, false) }
                reading.invalidate(in: changeCounter)
                position = reading.end
                watcher.lease.lapsed = false
                guard !reading.events.isEmpty else { return (false, true) }
                for listener in listeners { listener.enqueue(reading.events) }
                return (true, true)
            }
        }
    }

    // MARK: Commits

    /// Runs `write`, one write transaction through the instance of `broadcaster`, and queues the
    /// events it returns for every instance; returns whether it queued any. `write` is told
    /// whether anyone observes, so that it can skip working out events no one would receive, and,
    /// when someone does and this process watches, the change-log position from which to report
    /// other processes' commits first.
    ///
    /// After the write it counts the commit (``changeCounter``) and tells the caches what changed:
    /// those of every instance what other processes changed before it, those of the other
    /// instances (not in front of `provider`) what it changed.
    func commit(
        from broadcaster: ChangeBroadcaster, provider: AnyObject,
        _ write: (_ reportingEvents: Bool, _ logPosition: Int64?) throws(DefaultsError) -> SQLiteCommitEvents
    ) throws(DefaultsError) -> Bool {
        try commits.withLock { position throws(DefaultsError) -> Bool in
            let listeners = members.withLock { $0.values.compactMap(\.broadcaster) }
            let observed = listeners.contains(where: \.hasObservers) || changeCounter.hasCaches
            let events = try write(observed, observed ? position : nil)
            changeCounter.committed()
            if let earlier = events.earlier, position != nil {
                earlier.invalidate(in: changeCounter)
                position = earlier.end
            }
            changeCounter.invalidate(keysOf: events.own, exceptCachesOf: provider)
            let earlier = events.earlier?.events ?? []
            guard !earlier.isEmpty || !events.own.isEmpty else { return false }
            for listener in listeners {
                listener.enqueue(earlier)
                if listener === broadcaster {
                    listener.enqueue(events.own)
                } else {
                    listener.enqueue(events.own.lazy.map { DefaultsChangeEvent(key: $0.key, newValue: $0.newValue, origin: .external) })
                }
            }
            return true
        }
    }

    /// Delivers the queued events of every instance. Call it without holding any lock.
    func deliverPending() {
        for listener in members.withLock({ $0.values.compactMap(\.broadcaster) }) {
            listener.deliverPending()
        }
    }
}

/// The events of one commit.
struct SQLiteCommitEvents {
    /// What other processes committed before it and this process had not reported yet (origin
    /// `.external`), with the change-log position after them, when the log was read.
    var earlier: ChangeLog.Report?
    /// What the commit itself changed (origin `.local`).
    var own: [DefaultsChangeEvent] = []
}
