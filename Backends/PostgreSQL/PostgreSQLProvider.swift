import AnyDefaultsCore
import PostgresNIO
import Synchronization

/// A provider whose store lives in a PostgreSQL database, shared by every process and machine
/// that opens it, and kept live in each of them.
///
/// Each instance reads from a local replica of its namespace, loaded with one query when it
/// opens and kept fresh with `LISTEN`/`NOTIFY`: reads never touch the network. Writes go to the
/// server and return once committed (durable); a batch is one transaction. Changes made by other
/// processes and machines reach observers (and so caches, streams, `@Default` properties and
/// models) as `.external` events. Notifications are not durable, so the replica also checks its
/// namespace's revision after every reconnect and on a heartbeat, and reads what it missed.
///
/// ```swift
/// let store = try PostgreSQLProvider(url: "postgres://app@db.internal:5432/settings?namespace=checkout")
/// try store.setValue(.bool(true), forKey: "feature.newCart")            // committed when it returns
/// let enabled = try store.value(forKey: "feature.newCart")              // from the replica
/// try await store.setValueAsync(.int(20), forKey: "limits.cartItems")   // from async code
/// ```
///
/// ## Writes from async code
/// `setValue`, `removeValue`, `apply` and `removeAll` block the calling thread for a round trip
/// and a commit (about a millisecond on a local network, plus the server's flush). From async
/// code call `setValueAsync`, `removeValueAsync`, `applyAsync`, `removeAllAsync` (or
/// `Defaults.async`), which suspend the task instead; the synchronous ones refuse to run on a
/// SwiftNIO event loop thread.
///
/// ## While the server cannot be reached
/// Reads serve the replica as it was. Writes fail at once with
/// ``DefaultsError/Code-swift.struct/unavailable`` (nothing was written); a write whose
/// connection is lost, or whose statement passes ``Options/timeout``, fails with
/// ``DefaultsError/Code-swift.struct/ioFailure``: it may or may not have committed, and the replica
/// shows which after reconnecting. The connection is retried at once, then with a backoff from
/// 50 ms to 2 s; on reconnecting, every namespace catches up and reports what it missed.
///
/// ## Connections
/// One connection per server per process, however many stores (namespaces) and instances use
/// it: it carries the `LISTEN`s, the catch-ups and the writes. See Docs/Backends.md for the
/// schema, the limits and the failure behaviour.
public final class PostgreSQLProvider: RefreshingProvider {
    static let backend = "PostgreSQL"

    /// How this store was opened (the password included, so keep it to yourself).
    public let options: Options

    private let namespace: PostgreSQLNamespace
    private let broadcaster = ChangeBroadcaster()
    private let closed = Atomic(false)

    /// Opens the store `options` name: connects (or joins this process's connection to that
    /// server), creates the tables if they are missing, and loads the namespace. Blocks for as long
    /// as that takes, at most about ``Options/connectTimeout`` plus twice ``Options/timeout``;
    /// from async code use ``open(options:)``.
    ///
    /// - Throws: ``DefaultsError``: `unavailable` when the server cannot be reached,
    ///   `permissionDenied` when it refuses the login or the tables, `notFound` for a database
    ///   that does not exist, `incompatibleFormat` for tables of a newer version,
    ///   `invalidConfiguration` for bad options, `unsupported` on a SwiftNIO event loop thread.
    public convenience init(options: Options) throws(DefaultsError) {
        try self.init(joining: options.validated())
        do {
            _ = try PostgreSQLWait.result(
                of: opened(), within: options.connectTimeout + options.timeout * 3 + .seconds(1),
                action: "Opening the namespace \"\(options.namespace)\" on \(options.serverDescription)")
        } catch {
            close()
            throw error
        }
    }

    /// Opens the store a store string names (see ``Options/init(_:environment:)``), such as
    /// `postgres://app@db.internal/settings?namespace=checkout`.
    public convenience init(url: String) throws(DefaultsError) {
        try self.init(options: Options(StoreConfiguration(parsing: url)))
    }

    /// Opens the store `options` name without blocking a thread: the async form of
    /// ``init(options:)``.
    public static func open(options: Options) async throws(DefaultsError) -> PostgreSQLProvider {
        let provider = try PostgreSQLProvider(joining: options.validated())
        do {
            try await PostgreSQLWait.result(of: provider.opened(), action: "Opening the namespace \"\(options.namespace)\"")
        } catch {
            provider.close()
            throw error
        }
        return provider
    }

    /// Succeeds once the namespace is loaded and holds everything committed when the store was
    /// opened: another instance of this process may have loaded it earlier, and its replica may
    /// not have caught up yet with what other machines wrote since (one more round trip).
    private func opened() -> EventLoopFuture<Void> {
        let namespace = namespace
        return namespace.loaded().flatMap { namespace.refresh() }
    }

    /// Joins the namespace (which starts loading it); the caller waits for the load.
    private init(joining options: Options) throws(DefaultsError) {
        self.options = options
        let session = try PostgreSQLSession.shared(options)
        var namespace = session.namespace(named: options.namespace)
        // A namespace whose last instance is leaving refuses; the session then makes a new one.
        while !namespace.join(broadcaster) { namespace = session.namespace(named: options.namespace) }
        self.namespace = namespace
    }

    deinit {
        close()
    }

    /// Leaves the store now instead of when the provider is released; the process's connection
    /// to the server closes with its last store. Later calls fail with
    /// ``DefaultsError/Code-swift.struct/closed``; closing again does nothing.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        namespace.leave(broadcaster)
    }

    public var capabilities: DefaultsCapabilities { [.persistent, .atomicBatch, .multiProcess, .externalChanges] }

    /// The server, database and namespace (whoever connects): two providers naming the same reach
    /// the same keys. Another name for the same server (an address for a host name) is not known.
    public var storeIdentity: DefaultsStoreIdentity? {
        .named(String(options.serverDescription.drop { $0 != "@" }.dropFirst()) + "#" + options.namespace, backend: "PostgreSQL")
    }

    // MARK: Reads, from the replica

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try checkOpen()
        return try namespace.value(forKey: key)
    }

    public func keys() throws(DefaultsError) -> [String] {
        try checkOpen()
        return namespace.keys
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try checkOpen()
        return namespace.values
    }

    // MARK: Writes, committed on the server


    /// Removes `key` in one transaction on the server and tells whether it held a value: of
    /// several clients removing the same key at once, exactly one is told it was there.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try checkOpen()
        let existed = try PostgreSQLWait.result(
            of: namespace.remove(key, from: broadcaster), within: options.timeout * 3 + .seconds(1), action: "Removing")
        namespace.deliverPending()
        return existed
    }

    /// Removes each key of `expected` that still holds the value given for it, atomically per key
    /// on the server (another machine's write between this call's read and its removal keeps the
    /// key), and returns the keys removed: what a move from this store deletes.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: Self.backend)
        try checkOpen()
        guard !expected.isEmpty else { return [] }
        let removed = try PostgreSQLWait.result(
            of: namespace.removeUnchanged(Dictionary(expected, uniquingKeysWith: { _, last in last }), from: broadcaster),
            within: options.timeout * 6 + .seconds(1), action: "Removing")
        namespace.deliverPending()
        return removed.sorted { $0.utf8Precedes($1) }
    }

    /// Applies `changes` in one transaction only if each key of `expected` holds the value given
    /// for it (`nil`: absent) on the server at that moment, not only in this process's replica;
    /// returns whether it did. Atomic across every client of the namespace: of several clients
    /// doing a read-modify-write of one key this way, none loses another's update.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let conditions = try DefaultsValidation.canonicalConditions(expected, backend: Self.backend)
        let changes = try prepare(changes) ?? []
        // Clamped far below overflow: NIODeadline's arithmetic traps on it.
        let deadline = NIODeadline.now() + .nanoseconds(Int64(min(options.timeout.clampedNanoseconds, UInt64(Int64.max / 4))))
        let wrote = try PostgreSQLWait.result(
            of: namespace.write(changes, ifUnchanged: conditions, from: broadcaster, deadline: deadline),
            within: options.timeout * 3 + .seconds(1), action: "Writing")
        namespace.deliverPending()
        return wrote
    }

    /// Applies `changes` in one transaction: all or nothing.
    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        guard let changes = try prepare(changes) else { return }
        try wait(namespace.write(changes, from: broadcaster), "Writing")
    }

    public func removeAll() throws(DefaultsError) {
        try checkOpen()
        try wait(namespace.removeAll(from: broadcaster), "Removing every key")
    }

    public func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        try await applyAsync([.set(key, value)])
    }

    public func removeValueAsync(forKey key: String) async throws(DefaultsError) {
        try await applyAsync([.remove(key)])
    }

    public func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError) {
        guard let changes = try prepare(changes) else { return }
        try await PostgreSQLWait.result(of: namespace.write(changes, from: broadcaster), action: "Writing")
        namespace.deliverPending()
    }

    public func removeAllAsync() async throws(DefaultsError) {
        try checkOpen()
        try await PostgreSQLWait.result(of: namespace.removeAll(from: broadcaster), action: "Removing every key")
        namespace.deliverPending()
    }

    /// The batch validated, with canonical keys, each key once with its last change (in the order
    /// of those last changes); `nil` if there is nothing to write.
    private func prepare(_ changes: [DefaultsChange]) throws(DefaultsError) -> [DefaultsChange]? {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        try checkOpen()
        guard !changes.isEmpty else { return nil }
        var last: [String: Int] = [:]
        for (index, change) in changes.enumerated() { last[change.key] = index }
        guard last.count < changes.count else { return changes }
        return changes.enumerated().filter { last[$0.element.key] == $0.offset }.map(\.element)
    }

    private func wait(_ future: @autoclosure () -> EventLoopFuture<Void>, _ action: String) throws(DefaultsError) {
        // Each statement has its own limit; this bounds the catch-up a write may wait for too.
        try PostgreSQLWait.result(of: future(), within: options.timeout * 3 + .seconds(1), action: action)
        namespace.deliverPending()
    }

    private func checkOpen() throws(DefaultsError) {
        if closed.load(ordering: .acquiring) { throw .postgres(.closed, "The store was closed.") }
    }

    // MARK: Events

    /// Reports changes made through this instance (origin `.local`), and with origin `.external`
    /// those made through other instances, processes and machines, in commit order. Changes from
    /// elsewhere arrive after their commit's notification reached this process and the rows were
    /// read (a round trip); see Docs/Performance.md for the measured latency.
    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        broadcaster.observe(handler)
    }

    /// Brings the replica up to date with the server now, rather than when the next notification
    /// or heartbeat says so: for reading, right after, what another machine has just written.
    public func refresh() throws(DefaultsError) {
        try checkOpen()
        try wait(namespace.refresh(), "Refreshing")
    }

    /// The async form of ``refresh()``.
    public func refreshAsync() async throws(DefaultsError) {
        try checkOpen()
        try await PostgreSQLWait.result(of: namespace.refresh(), action: "Refreshing")
        namespace.deliverPending()
    }
}
