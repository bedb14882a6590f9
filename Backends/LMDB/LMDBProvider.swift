import AnyDefaultsCore
import Synchronization

/// A provider that keeps values in an LMDB database: fast memory-mapped reads, crash-safe atomic
/// writes, and several processes on one store.
///
/// The store is a directory holding LMDB's `data.mdb` and `lock.mdb`. The directory is created
/// (owner-only) if its parent exists; the files are created readable and writable by their owner
/// only. Every provider opened on one directory in a process shares one LMDB environment, so each
/// sees the others' writes at once, and observers of one see the others' changes as
/// ``DefaultsChangeEvent/Origin-swift.enum/external``. Changes made by other processes are read at
/// once too, and reported to observers as `.external`, key by key, in commit order (see
/// ``observe(_:)``).
///
/// ```swift
/// let store = try LMDBProvider(path: "/var/lib/myapp/prefs")
/// try store.setValue(.string("dark"), forKey: "ui.theme")
/// try store.apply([.set("launchCount", .int(2)), .remove("legacy.theme")])   // one transaction
/// ```
///
/// Values are stored in a compact binary encoding, exactly (see ``DefaultsValue``); keys of any
/// length work, including those beyond LMDB's 511-byte key limit. The map grows by itself up to
/// ``Options-swift.struct/maximumMapSize``. See Docs/Backends.md for the guarantees in full.
public final class LMDBProvider: DefaultsProvider {
    static let backend = "LMDB"

    /// The store's directory, as given.
    public let path: String
    /// The options this provider was opened with. Map sizes are those of the first provider opened
    /// on the directory in this process; the durability is this provider's own.
    public let options: Options

    private let environment: LMDBEnvironment
    private let scheme: LMDBKeyScheme
    private let broadcaster = ChangeBroadcaster()
    /// Identifies this provider's writes among those of the environment's other providers.
    private let token: Int
    private let closed = Atomic<Bool>(false)

    /// Opens the store in the directory `path`, creating the directory if its parent exists.
    ///
    /// - Throws: ``DefaultsError`` naming the path: `.notFound` if the parent directory is
    ///   missing, `.permissionDenied` if the location cannot be written, `.corrupted` if the files
    ///   are not an LMDB store or are truncated, `.incompatibleFormat` if they hold data this
    ///   library did not write or a newer format. Nothing stored is changed when opening fails.
    public convenience init(path: String, options: Options = Options()) throws(DefaultsError) {
        try self.init(path: path, options: options, scheme: .standard)
    }

    /// Opens the store with a particular key scheme (tests use one whose hash collides).
    init(path: String, options: Options, scheme: LMDBKeyScheme) throws(DefaultsError) {
        self.path = path
        self.options = options
        self.scheme = scheme
        environment = try LMDBEnvironmentRegistry.acquire(path: path, options: options)
        token = environment.listeners.register(broadcaster)
    }

    deinit {
        close()
    }

    /// Closes this provider: later calls fail with ``DefaultsError/Code-swift.struct/closed``. The
    /// store's files are closed when the last provider on them is. Calling it again does nothing;
    /// releasing the provider closes it too.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        environment.listeners.unregister(token)
        LMDBEnvironmentRegistry.release(environment)
    }

    public var capabilities: DefaultsCapabilities { [.persistent, .atomicBatch, .multiProcess, .externalChanges] }

    /// The count of every process's commits to this store: a cache in front answers a read from
    /// memory only while no other process committed since it last caught up (see
    /// ``AnyDefaultsCore/CachingProvider``).
    public var sharedChangeCounter: SharedChangeCounter? { environment.changeCounter }

    /// Reads what other processes changed since this process last looked, and reports it to
    /// observers (which otherwise hear of it within moments, on their own).
    public func synchronize() throws(DefaultsError) {
        try checkOpen()
        environment.changeCounter.synchronize()
    }

    /// Flushes every commit to the disk, also those of `nosync` and `mapped` providers (see
    /// ``AnyDefaultsCore/DefaultsProvider/makeDurable()``).
    public func makeDurable() throws(DefaultsError) {
        try checkOpen()
        try environment.syncToDisk()
    }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try checkOpen()
        try environment.checkDataFile(always: false)
        return try environment.value(forKey: key, scheme: scheme)
    }


    /// Writes one key in its own LMDB write transaction, without the arrays a batch builds (its
    /// changes, their canonical copies, the prepared changes, the events).
    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend)
        try checkOpen()
        let change = LMDBPreparedChange(.set(key, value))
        try write(estimatedSize: change.size) { transaction throws(DefaultsError) in
            try transaction.apply(change, scheme: scheme) ? [DefaultsChangeEvent(key: key, newValue: value)] : []
        }
    }

    /// Removes `key` in one LMDB write transaction and tells whether it was there.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try checkOpen()
        let change = LMDBPreparedChange(.remove(key))
        var existed = false
        try write(estimatedSize: change.size) { transaction throws(DefaultsError) in
            existed = try transaction.apply(change, scheme: scheme)
            return existed ? [DefaultsChangeEvent(key: key, newValue: nil)] : []
        }
        return existed
    }

    public func keys() throws(DefaultsError) -> [String] {
        try checkOpen()
        try environment.checkDataFile(always: false)
        return try environment.read { transaction throws(DefaultsError) in try transaction.keys(scheme: scheme) }
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try checkOpen()
        try environment.checkDataFile(always: false)
        return try environment.read { transaction throws(DefaultsError) in try transaction.allValues(scheme: scheme) }
    }

    /// The keys under `prefix`, from a cursor range over the keys (and one over the long-key
    /// buckets), so listing a few keys costs the same in a store of a thousand keys or of millions.
    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        let prefix = DefaultsKeyPrefix(prefix)
        try checkOpen()
        return try environment.read { transaction throws(DefaultsError) in try transaction.keys(withPrefix: prefix, scheme: scheme) }
    }

    /// The values under `prefix`, from the same ranges, in one read transaction.
    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        let prefix = DefaultsKeyPrefix(prefix)
        try checkOpen()
        return try environment.read { transaction throws(DefaultsError) in
            try transaction.allValues(withPrefix: prefix, scheme: scheme)
        }
    }

    /// Applies `changes` in one LMDB write transaction: all of them or, if anything fails (also a
    /// crash or power loss), none.
    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        guard !changes.isEmpty else { return }
        try checkOpen()
        let prepared = changes.map(LMDBPreparedChange.init)
        let size = prepared.reduce(0) { $0 + $1.size }
        try write(estimatedSize: size) { transaction throws(DefaultsError) in
            var events: [DefaultsChangeEvent] = []
            for change in prepared where try transaction.apply(change, scheme: scheme) {
                events.append(DefaultsChangeEvent(key: change.key, newValue: change.value))
            }
            return events
        }
    }

    /// Compares and applies in one LMDB write transaction: no other writer, in this process or
    /// another, comes between the comparison and the changes. A damaged value counts as changed.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        let expected = try DefaultsValidation.canonicalConditions(expected, backend: Self.backend)
        try checkOpen()
        let prepared = changes.map(LMDBPreparedChange.init)
        let size = prepared.reduce(0) { $0 + $1.size }
        var applied = false
        try write(estimatedSize: size) { transaction throws(DefaultsError) in
            applied = false
            for (key, value) in expected {
                let stored: DefaultsValue?
                do throws(DefaultsError) {
                    stored = try transaction.value(forKey: key, scheme: scheme)
                } catch where error.code == .corrupted {
                    return []
                }
                guard stored == value else { return [] }
            }
            applied = true
            var events: [DefaultsChangeEvent] = []
            for change in prepared where try transaction.apply(change, scheme: scheme) {
                events.append(DefaultsChangeEvent(key: change.key, newValue: change.value))
            }
            return events
        }
        return applied
    }

    /// Compares and removes in one LMDB write transaction: no other writer, in this process or
    /// another, comes between the comparison and the removal. A damaged value counts as changed.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: Self.backend)
        guard !expected.isEmpty else { return [] }
        try checkOpen()
        var removed: [String] = []
        try write(estimatedSize: 0) { transaction throws(DefaultsError) in
            removed = []
            for (key, value) in expected where (try? transaction.value(forKey: key, scheme: scheme)) == value {
                if try transaction.apply(LMDBPreparedChange(.remove(key)), scheme: scheme) { removed.append(key) }
            }
            return removed.map { DefaultsChangeEvent(key: $0, newValue: nil) }
        }
        return removed
    }

    /// The store's data file and lock file.
    public var storeIdentity: DefaultsStoreIdentity? { Self.storeIdentity(path: environment.path) }

    /// The identity of the store in the directory `path`, without opening it.
    public static func storeIdentity(path: String) -> DefaultsStoreIdentity {
        .files(path + "/data.mdb", sidecars: [path + "/lock.mdb", path + "/counter"])
    }

    /// Removes every key in one write transaction.
    public func removeAll() throws(DefaultsError) {
        try checkOpen()
        try write(estimatedSize: 0) { transaction throws(DefaultsError) in
            try transaction.removeAllKeys(scheme: scheme).map { DefaultsChangeEvent(key: $0, newValue: nil) }
        }
    }

    /// Reports changes made through this provider (origin `.local`), and with origin `.external`
    /// those made through other providers on the store in this process and by other processes.
    ///
    /// Other processes' changes are found through the store's change log, which records the keys
    /// each commit changed while some other process watches the store: each key arrives once per
    /// burst of commits, in the order of its last change, with the value it holds when the log is
    /// read. On Linux a commit is noticed at once (inotify on `data.mdb`), elsewhere within 50 ms.
    /// The first observer (a cache in front observes too) starts the watch, which takes a lease on
    /// the log, one small write; the watch stops when the last provider on the store is closed or
    /// released.
    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        let observation = broadcaster.observe(handler)
        if !closed.load(ordering: .acquiring) { environment.watch(scheme: scheme) }
        return observation
    }

    private func write(
        estimatedSize: Int, _ body: (LMDBTransaction) throws(DefaultsError) -> [DefaultsChangeEvent]
    ) throws(DefaultsError) {
        // Never into a data file that is no longer the store's: checked first, and again if the
        // write had to wait for the lock (the file may have been replaced meanwhile).
        for attempt in 1...Self.replacedFileRetries {
            try environment.checkDataFile(always: true)
            do throws(DefaultsError) {
                return try environment.write(
                    noSync: options.durability != .synced, estimatedSize: estimatedSize, origin: token, provider: self,
                    scheme: scheme, body)
            } catch where error.cause is LMDBDataFileReplaced && attempt < Self.replacedFileRetries {
                continue
            }
        }
    }

    /// How often a write is tried when each time the data file was replaced while it waited.
    private static let replacedFileRetries = 4

    /// The current size of the memory map, in bytes.
    var mapSize: Int { environment.mapSize }

    /// The ID of the store's last committed transaction, as the watcher reads it.
    var lastTransaction: Int? { environment.lastTransaction }

    /// Maps the data file again, as adopting another process's map size does.
    func remap() throws(DefaultsError) { try environment.adoptMapSize() }

    private func checkOpen() throws(DefaultsError) {
        if closed.load(ordering: .acquiring) {
            throw DefaultsError(.closed, "The store was closed.", backend: Self.backend, path: path)
        }
    }
}

// MARK: Inspection, for tests

extension LMDBProvider {
    /// The store's format, as its marker records it.
    func formatVersion() throws(DefaultsError) -> UInt8? {
        try environment.read { transaction throws(DefaultsError) in try transaction.checkFormatMarker() }
    }

    /// The change log's entries, oldest first.
    func changeLogEntries() throws(DefaultsError) -> [ChangeLog.Entry] {
        try environment.read { transaction throws(DefaultsError) in try transaction.logEntries(from: 0) }
    }

    /// The origins holding a lease.
    func leaseHolders() throws(DefaultsError) -> [Int64] {
        try environment.read { transaction throws(DefaultsError) in try transaction.leaseHolders() }
    }

    /// Runs `body` in a write transaction of its own and wakes the watchers, as another process
    /// commits: nothing is reported or logged for this process.
    func commitAsAnotherProcess(_ body: (LMDBTransaction) throws(DefaultsError) -> Void) throws(DefaultsError) {
        try environment.writer.withLock { _ throws(DefaultsError) in
            try environment.commitWithGrowth(estimatedSize: 1024, body)
        }
        ChangeLog.ringDoorbell(path: environment.path + "/data.mdb")
    }
}
