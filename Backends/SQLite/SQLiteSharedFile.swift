import AnyDefaultsCore
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
    /// A file's identity: the same file under any path spelling or link.
    struct FileID: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    private struct Member: Sendable {
        weak var broadcaster: ChangeBroadcaster?
    }

    private struct Entry: Sendable {
        weak var file: SQLiteSharedFile?
    }

    /// The files open in this process.
    private static let open = Mutex<[FileID: Entry]>([:])

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

    private init() {}

    /// Whether a connection of this process has the file `id` open.
    static func isOpen(_ id: FileID) -> Bool {
        open.withLock { $0[id]?.file != nil }
    }

    /// The shared state of the file `id`, with `broadcaster` (one instance's) added to it.
    static func join(_ id: FileID, broadcaster: ChangeBroadcaster) -> SQLiteSharedFile {
        let file = open.withLock { open in
            if let file = open[id]?.file { return file }
            open = open.filter { $0.value.file != nil }
            let file = SQLiteSharedFile()
            open[id] = Entry(file: file)
            return file
        }
        file.members.withLock { $0[ObjectIdentifier(broadcaster)] = Member(broadcaster: broadcaster) }
        return file
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
    /// connection is opened with `synchronous` and `busyTimeout`. If the store cannot be watched
    /// (its lease cannot be taken within the busy timeout), the next observer tries again; until
    /// then other processes' changes are read by every call but not reported.
    func watch(path: String, synchronous: StaticString, busyTimeout: Duration) {
        watcher.withLock { watcher in
            guard watcher == nil else { return }
            guard
                let started = try? SQLiteChangeWatcher(
                    path: path, synchronous: synchronous, busyTimeout: busyTimeout,
                    onChange: { [weak self] in self?.readOtherProcessesCommits() },
                    onTimer: { [weak self] in self?.readOtherProcessesCommits() })
            else { return }
            commits.withLock { $0 = started.startPosition }
            watcher = started
        }
    }

    /// Renews the lease if it is due, then reads the change log after the position and reports
    /// what other processes changed.
    private func readOtherProcessesCommits() {
        let queued = watcher.withLock { watcher -> Bool in
            guard let watcher else { return false }
            // A failure (the store busy beyond the timeout, or damaged) is retried on the next
            // change or tick; a lease that lapsed meanwhile is noted then.
            try? watcher.keepLease()
            // Most wake-ups are this process's own commits, which log nothing it reads.
            guard let end = try? watcher.connection.logEnd() else { return false }
            guard watcher.lease.lapsed || end != commits.withLock({ $0 }) else { return false }
            return commits.withLock { position -> Bool in
                guard let start = position else { return false }
                let listeners = members.withLock { $0.values.compactMap(\.broadcaster) }
                // Unobserved, only the position moves: no one would receive events.
                guard listeners.contains(where: \.hasObservers) else {
                    position = end
                    watcher.lease.lapsed = false
                    return false
                }
                guard let (events, end) = try? watcher.connection.logEvents(after: start, complete: !watcher.lease.lapsed)
                else { return false }
                position = end
                watcher.lease.lapsed = false
                guard !events.isEmpty else { return false }
                for listener in listeners { listener.enqueue(events) }
                return true
            }
        }
        if queued { deliverPending() }
    }

    // MARK: Commits

    /// Runs `write`, one write transaction through the instance of `broadcaster`, and queues the
    /// events it returns for every instance; returns whether it queued any. `write` is told
    /// whether anyone observes, so that it can skip working out events no one would receive, and,
    /// when someone does and this process watches, the change-log position from which to report
    /// other processes' commits first.
    func commit(
        from broadcaster: ChangeBroadcaster,
        _ write: (_ reportingEvents: Bool, _ logPosition: Int64?) throws(DefaultsError) -> SQLiteCommitEvents
    ) throws(DefaultsError) -> Bool {
        try commits.withLock { position throws(DefaultsError) -> Bool in
            let listeners = members.withLock { $0.values.compactMap(\.broadcaster) }
            let observed = listeners.contains(where: \.hasObservers)
            let events = try write(observed, observed ? position : nil)
            if let end = events.logPosition, position != nil { position = end }
            guard !events.earlier.isEmpty || !events.own.isEmpty else { return false }
            for listener in listeners {
                listener.enqueue(events.earlier)
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
    /// `.external`).
    var earlier: [DefaultsChangeEvent] = []
    /// What the commit itself changed (origin `.local`).
    var own: [DefaultsChangeEvent] = []
    /// The change-log position after ``earlier``, when they were read.
    var logPosition: Int64?
}
