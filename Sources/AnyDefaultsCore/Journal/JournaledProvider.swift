import AnyDefaultsPlatform
import Synchronization

/// A provider in front of a persistent store that acknowledges a write once it is appended to a
/// memory-mapped journal beside the store, and applies the journal to the store in batches:
/// writes at the cost of a memory copy that survive `kill -9` of the process.
///
/// What it keeps and gives up:
/// - A write that returned survives a crash of the process: the journal is replayed into the
///   store when it is opened next.
/// - A power loss or an operating-system crash loses at most the writes of the last
///   ``JournalOptions/flushInterval`` (they are in the journal's pages, not yet on disk); it never keeps
///   a newer write and loses an older one.
/// - The store belongs to one process at a time: the journal is held with an exclusive lock, so
///   another process opening it with a journal gets ``DefaultsError/Code/busy``, and one opening
///   the store without the journal reads it as of the last flush (and must not write it).
/// - Every value is kept in memory, like the stores MMKV keeps: reads never reach the store.
///
/// ```swift
/// let store = try SQLiteProvider(path: path).journaled()   // journal at "<path>.journal"
/// try store.setValue(.int(3), forKey: "launches")           // about a memory copy
/// ```
///
/// In a store string: `sqlite:/path/settings.sqlite?journal=on` (any backend whose store is a file).
/// Instances on one journal in a process share it (and see each other's writes at once).
public final class JournaledProvider<Upstream: DefaultsProvider>: DefaultsProvider {
    public typealias Options = JournalOptions

    /// The suffix of a journal's file name after the store's file (`settings.sqlite.journal`).
    public static var fileSuffix: String { ".journal" }

    /// The store the journal is applied to.
    public let upstream: Upstream
    private let store: JournalStore
    private static var backend: String { JournalStore.backend }

    /// Opens the journal at `journalPath` in front of `upstream` (a persistent store), replaying
    /// into it what a previous process left in the journal.
    ///
    /// Throws ``DefaultsError/Code/busy`` when another process has the journal open.
    public init(_ upstream: Upstream, journalPath: String, options: Options = Options()) throws(DefaultsError) {
        guard upstream.capabilities.contains(.persistent) else {
            throw DefaultsError(
                .invalidConfiguration, "A journal stands in front of a persistent store; this one keeps nothing.",
                backend: Self.backend, path: journalPath)
        }
        guard options.capacity >= 4096, options.capacity <= JournalFile.maximumSize else {
            throw DefaultsError(
                .invalidConfiguration, "A journal's capacity is 4 KiB to 1 GiB; \(options.capacity) bytes was asked.",
                backend: Self.backend, path: journalPath)
        }
        self.upstream = upstream
        let path = try Self.canonicalPath(journalPath)
        store = try JournalStore.open.object(for: path) { () throws(DefaultsError) in
            try JournalStore(upstream: upstream, path: path, capacity: options.capacity, flushInterval: options.flushInterval)
        }.object
    }

    /// The journal's path with its directory's links followed, so that two spellings of one
    /// journal share one instance.
    private static func canonicalPath(_ path: String) throws(DefaultsError) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, let resolved = realpath(directory, nil) else {
            let failure = SystemCallError.last("realpath", path: directory)
            throw DefaultsError(
                name.isEmpty ? .invalidConfiguration : failure.code, "The journal's directory could not be found.",
                backend: backend, path: path, cause: failure)
        }
        defer { free(resolved) }
        let canonical = String(cString: resolved)
        return canonical == "/" ? "/" + name : canonical + "/" + name
    }

    public var capabilities: DefaultsCapabilities {
        upstream.capabilities.intersection(.persistent).union(.atomicBatch)
    }

    /// The store's files and the journal beside them.
    public var storeIdentity: DefaultsStoreIdentity? {
        guard let files = upstream.storeIdentity?.files, let data = files.first else { return upstream.storeIdentity }
        return .files(data, sidecars: Array(files.dropFirst()) + [store.path])
    }

    // MARK: Reads: from the values in memory

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        return store.state.withLock { $0.values[key] }
    }

    public func keys() throws(DefaultsError) -> [String] {
        store.state.withLock { Array($0.values.keys) }
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        store.state.withLock { $0.values.values }
    }

    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        let prefix = DefaultsKeyPrefix(prefix)
        return store.state.withLock { $0.values.keys(withPrefix: prefix) }
    }

    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        let prefix = DefaultsKeyPrefix(prefix)
        return store.state.withLock { $0.values.values(withPrefix: prefix) }
    }

    // MARK: Writes: a record in the journal, then the values in memory

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend)
        let turn = try store.state.withLock { state throws(DefaultsError) -> ChangeBroadcaster.Turn? in
            guard state.values[key] != value else { return nil }
            // Logged before the values in memory change: a flush the record sets off applies
            // what was acknowledged before it, not this write.
            if try store.log(&state, { JournalRecord.appendSet(key, value, to: &$0) }) {
                state.touch(key)
            } else {
                try store.writeDirectly(.set(key, value))
            }
            state.values[key] = value
            return store.broadcaster.enqueueTurn(DefaultsChangeEvent(key: key, newValue: value))
        }
        store.broadcaster.deliver(turn)
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try removeValueIfPresent(forKey: key)
    }

    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        let (existed, turn) = try store.state.withLock { state throws(DefaultsError) -> (Bool, ChangeBroadcaster.Turn?) in
            guard state.values[key] != nil else { return (false, nil) }
            if try store.log(&state, { JournalRecord.appendRemove(key, to: &$0) }) {
                state.touch(key)
            } else {
                try store.writeDirectly(.remove(key))
            }
            state.values[key] = nil
            return (true, store.broadcaster.enqueueTurn(DefaultsChangeEvent(key: key, newValue: nil)))
        }
        store.broadcaster.deliver(turn)
        return existed
    }

    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        try store.state.withLock { state throws(DefaultsError) in try commit(changes, &state) }
        store.broadcaster.deliverPending()
    }

    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        let expected = try DefaultsValidation.canonicalConditions(expected, backend: Self.backend)
        let applied = try store.state.withLock { state throws(DefaultsError) -> Bool in
            guard expected.allSatisfy({ state.values[$0.key] == $0.value }) else { return false }
            try commit(changes, &state)
            return true
        }
        store.broadcaster.deliverPending()
        return applied
    }

    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: Self.backend)
        let removed = try store.state.withLock { state throws(DefaultsError) -> [String] in
            let removed = expected.filter { state.values[$0.key] == $0.value }.map(\.key).sorted()
            try commit(removed.map { .remove($0) }, &state)
            return removed
        }
        store.broadcaster.deliverPending()
        return removed
    }

    public func removeAll() throws(DefaultsError) {
        try store.state.withLock { state throws(DefaultsError) in
            guard !state.values.keys.isEmpty else { return }
            _ = try store.log(&state) { JournalRecord.appendClear(to: &$0) }
            store.broadcaster.enqueue(state.values.keys.map { DefaultsChangeEvent(key: $0, newValue: nil) })
            state.values.removeAll()
            state.cleared = true
        }
        store.broadcaster.deliverPending()
    }

    /// Logs and applies the changes of `changes` that change something, as one record, and
    /// queues their events in order.
    private func commit(_ changes: [DefaultsChange], _ state: inout JournalStore.State) throws(DefaultsError) {
        // The batch's effect, change by change, before anything is written.
        var batch: [String: DefaultsValue?] = [:]
        var effective: [DefaultsChange] = []
        for change in changes {
            let current = batch[change.key] ?? state.values[change.key]
            guard current != change.value else { continue }
            batch[change.key] = .some(change.value)
            effective.append(change)
        }
        guard !effective.isEmpty else { return }
        let logged = try store.log(&state) { bytes in
            for change in effective { JournalRecord.append(change, to: &bytes) }
        }
        if !logged { try store.writeDirectly(effective) }
        for change in effective {
            state.values[change.key] = change.value
            if logged { state.touch(change.key) }
        }
        store.broadcaster.enqueue(effective.map { DefaultsChangeEvent(key: $0.key, newValue: $0.value) })
    }

    // MARK: The store behind

    /// Applies the journal to the store, so that a process reading the store without the journal
    /// sees every write.
    public func synchronize() throws(DefaultsError) {
        try store.flush()
    }

    /// Applies the journal to the store and makes the store durable (see
    /// ``DefaultsProvider/makeDurable()``).
    public func makeDurable() throws(DefaultsError) {
        try store.flush()
        try upstream.makeDurable()
    }

    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        store.broadcaster.observe(handler)
    }
}
