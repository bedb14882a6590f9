import AnyDefaultsCore
import Dispatch
import Foundation
import Synchronization

/// A provider that keeps values in an SQLite database file, through the system's libsqlite3.
///
/// Durable, with atomic batches, and safe to share between threads, between several instances in
/// one process and between processes: every instance reads the file itself (nothing is cached),
/// so a write made through one instance is seen at once by every other. The file uses SQLite's
/// write-ahead log, so readers never wait for writers; writers queue behind each other for up to
/// `busyTimeout` instead of failing with "database is locked". Observers hear of the changes
/// other processes make too, key by key, in commit order (see ``observe(_:)``).
///
/// ```swift
/// let store = try SQLiteProvider(path: "/var/lib/myapp/settings.sqlite")
/// try store.setValue(.string("dark"), forKey: "ui.theme")
/// try store.apply([.set("window.width", .int(1280)), .remove("window.legacySize")])
/// ```
///
/// The file can be inspected with the `sqlite3` shell (`SELECT key, type, value FROM defaults`);
/// Docs/Backends.md describes the format. A new file is created readable and writable by its owner
/// only (mode 0600).
public final class SQLiteProvider: DefaultsProvider {
    static let backend = "SQLite"

    /// How far a committed write is protected, set with `PRAGMA synchronous`.
    public enum Durability: Sendable, Hashable {
        /// `synchronous = NORMAL`: a committed write survives the process crashing; a power loss or
        /// operating-system crash may undo the last writes, but never damages the file. The default.
        case normal
        /// `synchronous = FULL`: every commit is flushed to the disk before it returns, so it also
        /// survives a power loss. Each write then costs a disk flush.
        case full
    }

    /// The absolute path of the store file.
    public let path: String
    /// How far committed writes are protected.
    public let durability: Durability
    let busyTimeout: Duration

    private let handle: Handle
    private let broadcaster = ChangeBroadcaster()

    /// What this instance's calls use, behind one lock, apart from the provider so that the other
    /// instances on the file can close its connection when the file is replaced (``SQLiteSharedFile/retire()``).
    // Mutex<State> is Sendable without an @unchecked: the connection (and the C pointers it holds)
    // is handed to the Mutex on creation and reached only through withLock.
    private final class Handle: Sendable {
        let state: Mutex<State>
        init(_ state: consuming sending State) { self.state = Mutex(state) }

        /// Closes the connection unless a call is using it; whether it is closed.
        func closeIfIdle() -> Bool {
            state.withLockIfAvailable { state in
                state.connection.close()
                return true
            } ?? false
        }
    }

    private struct State {
        var connection: SQLiteConnection
        /// The other instances on the same file in this process, which are told of this one's commits.
        var sharedFile: SQLiteSharedFile
        /// Whether ``SQLiteProvider/close()`` was called.
        var closed = false
    }

    /// Opens the store at `path`, creating the file if it does not exist.
    ///
    /// - Parameters:
    ///   - path: The store file. Its directory must exist and be writable (SQLite keeps its
    ///     `-wal` and `-shm` files beside the store).
    ///   - durability: How far committed writes are protected; ``Durability/normal`` by default.
    ///   - busyTimeout: How long a write waits for another connection's transaction before failing
    ///     with ``DefaultsError/Code-swift.struct/busy``; taken as between zero and one year.
    /// - Throws: ``DefaultsError`` naming the path: `.notFound` for a missing directory,
    ///   `.permissionDenied` for a file or directory that cannot be written, `.corrupted` for a
    ///   file that is not an SQLite database or is damaged, `.incompatibleFormat` for another
    ///   application's database or a store written by a newer version. The file is left as it is.
    public init(path: String, durability: Durability = .normal, busyTimeout: Duration = .seconds(5))
        throws(DefaultsError)
    {
        let synchronous = Self.synchronous(durability)
        // Bounded, so that no deadline computed from it can overflow.
        let busyTimeout = min(max(busyTimeout, .zero), .seconds(365 * 86_400))
        let connection = try SQLiteConnection(path: path, synchronous: synchronous, busyTimeout: busyTimeout)
        self.path = connection.path
        self.durability = durability
        self.busyTimeout = busyTimeout
        let box = HandleBox()
        let sharedFile = try SQLiteSharedFile.join(
            connection.fileID, path: connection.path, broadcaster: broadcaster, closeIfIdle: { box.handle?.closeIfIdle() ?? true },
            follow: { box.provider?.followReplacement(from: $0) })
        handle = Handle(State(connection: connection, sharedFile: sharedFile))
        box.handle = handle
        self.box = box
        box.provider = self
    }

    /// Where the closures given to the shared file find this instance's handle, without keeping it.
    private final class HandleBox: @unchecked Sendable {
        // @unchecked: each is set once, in the initializer. `provider` is read only for an instance
        // whose broadcaster has observers, which it cannot have before its initializer returns.
        weak var handle: Handle?
        weak var provider: SQLiteProvider?
    }

    private let box: HandleBox

    deinit {
        handle.state.withLock { $0.sharedFile }.leave(broadcaster)
    }

    /// Runs `body` with the connection and the state shared with the other instances on the file,
    /// first opening the path again if the file under it was replaced (a backup renamed over it):
    /// checked at most every 50 ms on reads, at once by the watch, which wakes when the file is
    /// replaced, and by every write once it holds the write lock (`SQLiteConnection.transaction`,
    /// so not here too). So a write never goes to a file that is no longer the store.
    private func withConnection<T: Sendable>(
        writing: Bool, _ body: (SQLiteConnection, SQLiteSharedFile) throws(DefaultsError) -> T
    ) throws(DefaultsError) -> T {
        try handle.state.withLock { (state: inout State) throws(DefaultsError) -> T in
            guard !state.closed else {
                throw DefaultsError(.closed, "The store was closed.", backend: Self.backend, path: path)
            }
            var current = !state.sharedFile.isReplaced && state.connection.isOpen
            if current, !writing { current = try state.connection.namesThisFile(always: false) }
            if !current { try reopen(&state) }
            // A write checks the file again once it holds the write lock (see
            // `SQLiteConnection.transaction`): a file renamed over the store while it waited is
            // opened, and the write made there instead.
            for _ in 1..<Self.replacedFileRetries {
                do throws(DefaultsError) {
                    return try body(state.connection, state.sharedFile)
                } catch where state.connection.replacedWhileWaiting {
                    state.connection.replacedWhileWaiting = false
                    try reopen(&state)
                }
            }
            return try body(state.connection, state.sharedFile)
        }
    }

    /// How often a write is tried when each time the store file was replaced while it waited.
    private static let replacedFileRetries = 4

    /// Opens the path again after the file under it was replaced: gives up the old file (every
    /// connection of this process to it is closed, so SQLite copies its log into it and removes
    /// the log, which the new file must never read), opens the new one, and makes the caches
    /// forget what they held.
    private func reopen(_ state: inout State) throws(DefaultsError) {
        let old = state.sharedFile
        old.retire()
        state.connection.close()
        old.leave(broadcaster)
        let connection = try SQLiteConnection(
            path: path, synchronous: Self.synchronous(durability), busyTimeout: busyTimeout, creating: false)
        let box = box
        state.sharedFile = try SQLiteSharedFile.join(
            connection.fileID, path: path, broadcaster: broadcaster, closeIfIdle: { box.handle?.closeIfIdle() ?? true },
            follow: { box.provider?.followReplacement(from: $0) })
        state.connection = connection
        if broadcaster.hasObservers {
            state.sharedFile.watch(path: path, synchronous: Self.synchronous(durability), busyTimeout: busyTimeout)
        }
        state.sharedFile.changeCounter.invalidateAll()
    }

    /// After the watch found the file under the path replaced, deleted or its directory removed:
    /// opens the store at the path (on another thread, soon) and tells observers how it differs
    /// from `before`. While there is none, they hear every key removed, and it tries again every
    /// 100 ms as long as anyone observes.
    fileprivate func followReplacement(from before: [String: DefaultsValue]?, after delay: DispatchTimeInterval = .never) {
        let deadline: DispatchTime = delay == .never ? .now() : .now() + delay
        DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in
            guard let self, broadcaster.hasObservers, !handle.state.withLock({ $0.closed }) else { return }
            do {
                let after = try allValues()
                if let before { report(from: before, to: after) }
            } catch {
                if let before, !before.isEmpty { report(from: before, to: [:]) }
                followReplacement(from: before == nil ? nil : [:], after: .milliseconds(100))
            }
        }
    }

    /// Tells observers, as external changes, how `after` differs from `before`.
    private func report(from before: [String: DefaultsValue], to after: [String: DefaultsValue]) {
        broadcaster.enqueue(DefaultsChangeEvent.differences(from: before, to: after))
        broadcaster.deliverPending()
    }

    private static func synchronous(_ durability: Durability) -> StaticString {
        durability == .full ? "FULL" : "NORMAL"
    }

    /// Opens the store at the file `url`; see ``init(path:durability:busyTimeout:)``.
    public convenience init(url: URL, durability: Durability = .normal, busyTimeout: Duration = .seconds(5))
        throws(DefaultsError)
    {
        try self.init(path: url.path, durability: durability, busyTimeout: busyTimeout)
    }

    public var capabilities: DefaultsCapabilities { [.persistent, .atomicBatch, .multiProcess, .externalChanges] }

    /// The count of every process's commits to this store: a cache in front answers a read from
    /// memory only while no other process committed since it last caught up (see
    /// ``AnyDefaultsCore/CachingProvider``).
    public var sharedChangeCounter: SharedChangeCounter? { handle.state.withLock { $0.sharedFile.changeCounter } }

    /// Reads what other processes changed since this process last looked, and reports it to
    /// observers (which otherwise hear of it within moments, on their own).
    public func synchronize() throws(DefaultsError) {
        try withConnection(writing: false) { _, sharedFile in sharedFile }.changeCounter.synchronize()
    }

    /// Checkpoints the write-ahead log, which syncs it before anything is copied out of it: every
    /// commit made with `durability=normal` (which syncs at checkpoints only) is then durable (see
    /// ``AnyDefaultsCore/DefaultsProvider/makeDurable()``).
    public func makeDurable() throws(DefaultsError) {
        try withConnection(writing: false) { connection, _ throws(DefaultsError) in
            try connection.execute("PRAGMA wal_checkpoint(PASSIVE)", action: "Checkpointing the write-ahead log")
        }
        // A checkpoint that another connection's read keeps from copying any page syncs nothing:
        // the log itself is synced then, so that what it holds survives a power loss either way.
        do {
            try FileReplacement.syncFile(at: Self.sidecarBase(of: path) + "-wal")
        } catch {
            throw DefaultsError(error.code, "The write-ahead log could not be synced.", backend: Self.backend, path: path, cause: error)
        }
    }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        return try withConnection(writing: false) { connection, _ throws(DefaultsError) in try connection.value(forKey: key) }
    }

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend)
        try commit([.set(key, value)])
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try commit([.remove(DefaultsValidation.canonicalKey(key, backend: Self.backend))])
    }

    /// Removes `key` in one SQLite transaction and tells whether a row was deleted.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        var existed = false
        try write(removingOnly: true) { connection, reportingEvents, logPosition throws(DefaultsError) in
            let result = try connection.remove(key, reportingEvents: reportingEvents, logPosition: logPosition)
            existed = result.existed
            return result.events
        }
        return existed
    }

    public func keys() throws(DefaultsError) -> [String] {
        try withConnection(writing: false) { connection, _ throws(DefaultsError) in try connection.keys() }
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try withConnection(writing: false) { connection, _ throws(DefaultsError) in try connection.allValues() }
    }

    /// The keys under `prefix`, from one range of the table's index (`key >= prefix AND key <
    /// upper bound`), so listing a few keys costs the same in a store of a thousand keys or of
    /// millions.
    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        let prefix = DefaultsKeyPrefix(prefix)
        return try withConnection(writing: false) { connection, _ throws(DefaultsError) in try connection.keys(withPrefix: prefix) }
    }

    /// The values under `prefix`, from one range of the table's index, read in one statement.
    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        let prefix = DefaultsKeyPrefix(prefix)
        return try withConnection(writing: false) { connection, _ throws(DefaultsError) in try connection.allValues(withPrefix: prefix) }
    }

    /// Applies `changes` in one SQLite transaction: all or nothing, also if the process dies.
    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        guard !changes.isEmpty else { return }
        try commit(changes)
    }

    public func removeAll() throws(DefaultsError) {
        try write(removingOnly: true) { connection, reportingEvents, logPosition throws(DefaultsError) in
            try connection.removeAll(reportingEvents: reportingEvents, logPosition: logPosition)
        }
    }

    /// Compares and applies in one SQLite transaction: no other connection or process writes
    /// between the comparison and the changes.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        let expected = try DefaultsValidation.canonicalConditions(expected, backend: Self.backend)
        var applied = false
        try write(removingOnly: changes.allSatisfy { $0.value == nil }) { connection, reportingEvents, logPosition throws(DefaultsError) in
            let result = try connection.apply(changes, ifUnchanged: expected, reportingEvents: reportingEvents, logPosition: logPosition)
            applied = result.applied
            return result.events
        }
        return applied
    }

    /// Compares and removes in one SQLite transaction: no other connection or process writes
    /// between the comparison and the removal.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: Self.backend)
        guard !expected.isEmpty else { return [] }
        var removed: [String] = []
        try write(removingOnly: true) { connection, reportingEvents, logPosition throws(DefaultsError) in
            let result = try connection.removeUnchanged(expected, reportingEvents: reportingEvents, logPosition: logPosition)
            removed = result.removed
            return result.events
        }
        return removed
    }

    /// The database file and the journal files SQLite keeps beside it.
    public var storeIdentity: DefaultsStoreIdentity? { Self.storeIdentity(path: path) }

    /// The identity of the store at `path` (an absolute path), without opening it: the file, and
    /// every file kept beside it (SQLite's journals, the change counter, the disk-full reserve).
    public static func storeIdentity(path: String) -> DefaultsStoreIdentity {
        let base = sidecarBase(of: path)
        return .files(base, sidecars: ["-wal", "-shm", "-journal", "-counter", "-reserve"].map { base + $0 })
    }

    /// Where the files beside the store at `path` are: beside the file a link at `path` leads
    /// to, as SQLite puts its journals, so that every spelling of the store shares them.
    static func sidecarBase(of path: String) -> String {
        (try? FileReplacement.followingLinks(path)) ?? path
    }

    /// Writes validated, canonical `changes` and reports them to every instance on the file.
    private func commit(_ changes: [DefaultsChange]) throws(DefaultsError) {
        try write(removingOnly: changes.allSatisfy { $0.value == nil }) { connection, reportingEvents, logPosition throws(DefaultsError) in
            try connection.apply(changes, reportingEvents: reportingEvents, logPosition: logPosition)
        }
    }

    /// Runs `body`, one write transaction, and reports its events to every instance on the file.
    /// A write that only removes keys and fails because the disk is full gives up the store's
    /// reserve, truncates the write-ahead log and runs again (``SQLiteReserve``): removing keys is
    /// how a full store is shrunk.
    private func write(
        removingOnly: Bool,
        _ body: (SQLiteConnection, _ reportingEvents: Bool, _ logPosition: Int64?) throws(DefaultsError) -> SQLiteCommitEvents
    ) throws(DefaultsError) {
        let queued: SQLiteSharedFile?
        do throws(DefaultsError) {
            queued = try commitOnce(body)
        } catch where error.code == .storageFull && removingOnly {
            _ = SQLiteReserve.release(forStore: path)
            truncateLog()
            // Where SQLite overwrites freed pages with zeros (secure_delete, on in Debian's
            // build), removing large values writes as much as it frees: not this time.
            let previous = setSecureDelete(2)  // FAST
            defer { if let previous { _ = setSecureDelete(previous) } }
            queued = try commitOnce(body)
            truncateLog()
            SQLiteReserve.ensure(forStore: path)
        }
        queued?.deliverPending()
    }

    /// Runs `body` in ``SQLiteSharedFile/commit(from:provider:_:)``; returns the shared file if
    /// it queued events.
    private func commitOnce(
        _ body: (SQLiteConnection, _ reportingEvents: Bool, _ logPosition: Int64?) throws(DefaultsError) -> SQLiteCommitEvents
    ) throws(DefaultsError) -> SQLiteSharedFile? {
        try withConnection(writing: true) { connection, sharedFile throws(DefaultsError) in
            try sharedFile.commit(from: broadcaster, provider: self) { reportingEvents, logPosition throws(DefaultsError) in
                try body(connection, reportingEvents, logPosition)
            } ? sharedFile : nil
        }
    }

    /// Sets `PRAGMA secure_delete` on this instance's connection to `mode` (0 off, 1 on, 2 fast);
    /// returns the mode it had, or `nil` if that could not be done.
    private func setSecureDelete(_ mode: Int64) -> Int64? {
        try? withConnection(writing: false) { connection, _ throws(DefaultsError) -> Int64? in
            let previous = try connection.query("PRAGMA secure_delete", action: "Reading secure_delete") { $0.int64(column: 0) }
            // By name: a number would be read as a boolean.
            let name = mode == 2 ? "FAST" : mode == 0 ? "OFF" : "ON"
            try connection.execute("PRAGMA secure_delete = \(name)", action: "Setting secure_delete")
            return previous
        } ?? nil
    }

    /// Copies the write-ahead log into the store and truncates it, freeing its room (best effort).
    private func truncateLog() {
        _ = try? withConnection(writing: false) { connection, _ throws(DefaultsError) in
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", action: "Truncating the write-ahead log")
        }
    }

    /// Reports changes made through this instance (origin `.local`), and with origin `.external`
    /// those made through other instances on the same file in this process and by other processes
    /// using this library.
    ///
    /// Other processes' changes are found through the store's change log, which records the keys
    /// each commit changed while some other process watches the store: each key arrives once per
    /// burst of commits, in the order of its last change, with the value it holds when the log is
    /// read. On Linux a commit is noticed at once (inotify), elsewhere within 50 ms. The first
    /// observer (a cache in front observes too) starts the watch, which takes a lease on the log,
    /// one small write; the watch stops when the last instance on the file is closed or released.
    /// Writes by other programs (the `sqlite3` shell) are not logged, so not reported.
    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        let observation = broadcaster.observe(handler)
        if let sharedFile = handle.state.withLock({ $0.closed ? nil : $0.sharedFile }) {
            sharedFile.watch(path: path, synchronous: Self.synchronous(durability), busyTimeout: busyTimeout)
        }
        return observation
    }

    /// Closes the file now instead of when the provider is released, and stops watching it for
    /// other processes' changes if no other instance in this process has it open. Later calls fail
    /// with ``DefaultsError/Code-swift.struct/closed``; closing again does nothing.
    public func close() {
        let sharedFile = handle.state.withLock { state in
            state.closed = true
            state.connection.close()
            return state.sharedFile
        }
        sharedFile.leave(broadcaster)
    }
}

// MARK: Inspection, for tests

extension SQLiteProvider {
    /// The value of `PRAGMA name` on this instance's connection, as text.
    func pragma(_ name: String) throws(DefaultsError) -> String? {
        try withConnection(writing: false) { connection, _ throws(DefaultsError) in
            try connection.query("PRAGMA \(name)", action: "Reading PRAGMA \(name)") {
                String(decoding: $0.textBytes(column: 0), as: UTF8.self)
            }
        }
    }

    /// Lowers the largest string or blob this instance's connection accepts.
    func limitLength(to bytes: Int32) {
        handle.state.withLock { $0.connection.limitLength(to: bytes) }
    }

    /// How many statements are prepared on this instance's connection.
    var preparedStatementCount: Int {
        handle.state.withLock { $0.connection.preparedStatementCount }
    }
}
