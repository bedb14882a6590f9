import AnyDefaultsCore
import Synchronization

/// What the ``SQLiteProvider`` instances open on one store file in this process share: the order
/// of their commits, and each other's observers.
///
/// Each instance has its own connection, so each reads what the others committed at once. This
/// object adds the events: a commit through one instance is reported to that instance's observers
/// as `.local` and to every other instance's observers as `.external`, all in commit order. That
/// lets a cache in front of one instance (`CachingProvider`) forget what another instance changed.
/// Commits from other processes are not reported.
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
    /// Held from the start of a write transaction until its events are queued, so that every
    /// instance queues events in commit order. Writers on one file take turns anyway (SQLite lets
    /// one write at a time); this makes those in one process wait here instead of in the busy handler.
    private let commits = Mutex(())

    private init() {}

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

    /// Removes an instance's broadcaster, when the instance goes away.
    func leave(_ broadcaster: ChangeBroadcaster) {
        _ = members.withLock { $0.removeValue(forKey: ObjectIdentifier(broadcaster)) }
    }

    /// Runs `write`, one write transaction through the instance of `broadcaster`, and queues the
    /// events it returns for every instance; returns whether it queued any. `write` is told whether
    /// anyone observes, so that it can skip working out events no one would receive.
    func commit(
        from broadcaster: ChangeBroadcaster,
        _ write: (_ reportingEvents: Bool) throws(DefaultsError) -> [DefaultsChangeEvent]
    ) throws(DefaultsError) -> Bool {
        try commits.withLock { _ throws(DefaultsError) -> Bool in
            let observed = members.withLock { $0.values.contains { $0.broadcaster?.hasObservers == true } }
            let events = try write(observed)
            guard !events.isEmpty else { return false }
            for listener in members.withLock({ $0.values.compactMap(\.broadcaster) }) {
                if listener === broadcaster {
                    listener.enqueue(events)
                } else {
                    listener.enqueue(events.lazy.map { DefaultsChangeEvent(key: $0.key, newValue: $0.newValue, origin: .external) })
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
