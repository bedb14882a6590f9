import AnyDefaultsCore
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
    private let busyTimeout: Duration

    // Mutex<SQLiteConnection> is Sendable without an @unchecked: the connection (and the C
    // pointers it holds) is handed to the Mutex on creation and reached only through withLock.
    private let connection: Mutex<SQLiteConnection>
    private let broadcaster = ChangeBroadcaster()
    /// The other instances on the same file in this process, which are told of this one's commits.
    private let sharedFile: SQLiteSharedFile

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
        sharedFile = SQLiteSharedFile.join(connection.fileID, broadcaster: broadcaster)
        self.connection = Mutex(connection)
    }

    deinit {
        sharedFile.leave(broadcaster)
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

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        return try connection.withLock { connection throws(DefaultsError) in try connection.value(forKey: key) }
    }

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend)
        try commit([.set(key, value)])
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try commit([.remove(DefaultsValidation.canonicalKey(key, backend: Self.backend))])
    }

    public func keys() throws(DefaultsError) -> [String] {
        try connection.withLock { connection throws(DefaultsError) in try connection.keys() }
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try connection.withLock { connection throws(DefaultsError) in try connection.allValues() }
    }

    /// Applies `changes` in one SQLite transaction: all or nothing, also if the process dies.
    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        guard !changes.isEmpty else { return }
        try commit(changes)
    }

    public func removeAll() throws(DefaultsError) {
        let queued = try connection.withLock { connection throws(DefaultsError) in
            try sharedFile.commit(from: broadcaster) { reportingEvents, logPosition throws(DefaultsError) in
                try connection.removeAll(reportingEvents: reportingEvents, logPosition: logPosition)
            }
        }
        if queued { sharedFile.deliverPending() }
    }

    /// Compares and removes in one SQLite transaction: no other connection or process writes
    /// between the comparison and the removal.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: Self.backend)
        guard !expected.isEmpty else { return [] }
        var removed: [String] = []
        let queued = try connection.withLock { connection throws(DefaultsError) in
            try sharedFile.commit(from: broadcaster) { reportingEvents, logPosition throws(DefaultsError) in
                let result = try connection.removeUnchanged(expected, reportingEvents: reportingEvents, logPosition: logPosition)
                removed = result.removed
                return result.events
            }
        }
        if queued { sharedFile.deliverPending() }
        return removed
    }

    /// The database file and the journal files SQLite keeps beside it.
    public var storeIdentity: DefaultsStoreIdentity? { Self.storeIdentity(path: path) }

    /// The identity of the store at `path` (an absolute path), without opening it.
    public static func storeIdentity(path: String) -> DefaultsStoreIdentity {
        .files(path, sidecars: [path + "-wal", path + "-shm", path + "-journal"])
    }

    /// Writes validated, canonical `changes` and reports them to every instance on the file.
    private func commit(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let queued = try connection.withLock { connection throws(DefaultsError) in
            try sharedFile.commit(from: broadcaster) { reportingEvents, logPosition throws(DefaultsError) in
                try connection.apply(changes, reportingEvents: reportingEvents, logPosition: logPosition)
            }
        }
        if queued { sharedFile.deliverPending() }
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
        if connection.withLock({ $0.isOpen }) {
            sharedFile.watch(path: path, synchronous: Self.synchronous(durability), busyTimeout: busyTimeout)
        }
        return observation
    }

    /// Closes the file now instead of when the provider is released, and stops watching it for
    /// other processes' changes if no other instance in this process has it open. Later calls fail
    /// with ``DefaultsError/Code-swift.struct/closed``; closing again does nothing.
    public func close() {
        connection.withLock { $0.close() }
        sharedFile.leave(broadcaster)
    }
}

// MARK: Inspection, for tests

extension SQLiteProvider {
    /// The value of `PRAGMA name` on this instance's connection, as text.
    func pragma(_ name: String) throws(DefaultsError) -> String? {
        try connection.withLock { connection throws(DefaultsError) in
            try connection.query("PRAGMA \(name)", action: "Reading PRAGMA \(name)") {
                String(decoding: $0.textBytes(column: 0), as: UTF8.self)
            }
        }
    }

    /// Lowers the largest string or blob this instance's connection accepts.
    func limitLength(to bytes: Int32) {
        connection.withLock { $0.limitLength(to: bytes) }
    }

    /// How many statements are prepared on this instance's connection.
    var preparedStatementCount: Int {
        connection.withLock { $0.preparedStatementCount }
    }
}
