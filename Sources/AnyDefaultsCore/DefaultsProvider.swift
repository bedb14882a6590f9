/// A storage backend for defaults: the one protocol every backend implements.
///
/// A provider maps non-empty string keys to ``DefaultsValue``s. The contract, which the
/// `AnyDefaultsTesting` conformance suite checks (see Docs/Conformance.md):
///
/// - Any non-empty `String` is a key; canonically equivalent strings (equal under Swift's `==`)
///   are the same key. Keys of at least 1 KiB of UTF-8 work.
/// - A read returns what the last write stored, exactly (see ``DefaultsValue``).
/// - Removing an absent key is no error; ``keys()`` is exactly the stored set.
/// - ``apply(_:)`` applies changes in order; a batch that is rejected leaves no trace, and on
///   providers with ``DefaultsCapabilities/atomicBatch`` that holds even if the process dies.
/// - All members may be called from many threads at once, with no lost update and no torn read.
/// - Every failure is a ``DefaultsError``; no input crashes the process.
/// - Observers see one ``DefaultsChangeEvent`` per key whose value actually changed, in order.
///
/// A minimal provider implements ``value(forKey:)``, ``keys()``, ``apply(_:)``,
/// ``observe(_:)`` and ``capabilities``; the other members have default implementations built on
/// those, which a backend overrides when it can do better.
///
/// ```swift
/// let store: any DefaultsProvider = MemoryProvider()
/// try store.setValue(.int(3), forKey: "launchCount")
/// let count = try store.value(forKey: "launchCount")   // .int(3)
/// ```
public protocol DefaultsProvider: Sendable {
    /// What this provider promises beyond the basic contract.
    var capabilities: DefaultsCapabilities { get }

    /// The value stored under `key`, or `nil` if there is none.
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue?

    /// Stores `value` under `key`, replacing what was there.
    func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError)

    /// Removes `key`. Removing an absent key is no error.
    func removeValue(forKey key: String) throws(DefaultsError)

    /// Removes `key` and returns whether it held a value, in one step: no other writer's change
    /// to the key comes between the check and the removal, so of two callers removing the same
    /// key at once exactly one is told it was there.
    ///
    /// ```swift
    /// let existed = try store.removeValueIfPresent(forKey: "session.token")   // 204 or 404
    /// ```
    ///
    /// The default implementation reads the key, then removes it: correct for a store that no
    /// other thread or process writes in between. Every built-in provider overrides it with one
    /// atomic step (under its lock, or in one transaction); a custom provider shared by several
    /// writers should too.
    @discardableResult
    func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool

    /// Every stored key, in no particular order.
    func keys() throws(DefaultsError) -> [String]

    /// Every stored key with its value. A provider with ``DefaultsCapabilities/atomicBatch``
    /// answers from one snapshot, holding each batch wholly or not at all (the conformance suite
    /// checks it: `concurrency.wholeBatches`); the default implementation, which reads the keys one
    /// by one, suits only a provider without it.
    func allValues() throws(DefaultsError) -> [String: DefaultsValue]

    /// The stored keys under `prefix`, sorted by their UTF-8 bytes. A key is under a prefix when
    /// its canonical form starts with the prefix's, byte by byte (see ``DefaultsKeyPrefix``); the
    /// empty prefix is every key.
    ///
    /// ```swift
    /// let tenantKeys = try store.keys(withPrefix: "tenant/acme/")
    /// ```
    ///
    /// The default implementation filters ``keys()``, which reads every key. The SQLite, LMDB and
    /// in-memory providers override it with a range of their ordered index, so that its cost
    /// follows the number of keys under the prefix, not the size of the store; a provider with
    /// an ordered index of its own should too.
    func keys(withPrefix prefix: String) throws(DefaultsError) -> [String]

    /// Every stored key under `prefix` with its value (see ``keys(withPrefix:)``), read at one
    /// moment on every built-in provider: a batch written meanwhile shows whole or not at all.
    ///
    /// ```swift
    /// let tenant = try store.allValues(withPrefix: "tenant/acme/")
    /// ```
    ///
    /// The default implementation filters ``allValues()``; the SQLite, LMDB and in-memory
    /// providers override it with a range of their ordered index.
    func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue]

    /// Applies `changes` in order, as one batch: all or nothing where ``capabilities`` contains
    /// ``DefaultsCapabilities/atomicBatch``. A batch with an invalid key or value is rejected
    /// before anything is written, on every provider.
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError)

    /// Removes every key.
    func removeAll() throws(DefaultsError)

    /// Removes each key of `expected` that still holds the value given for it, in one batch, and
    /// returns the keys removed (in UTF-8 order). A key that holds another value, or none, is left
    /// alone. This is how a move deletes from its source only what it copied: a value another
    /// writer changed after the copy survives.
    ///
    /// ```swift
    /// let copied = try source.allValues()
    /// try destination.apply(copied.map { .set($0.key, $0.value) })
    /// let moved = try source.removeValues(ifUnchanged: copied)
    /// ```
    ///
    /// The default implementation reads the values, then removes the unchanged keys with
    /// ``apply(_:)``: correct for a store that no other thread or process writes between the two.
    /// Every built-in provider overrides it with one atomic compare-and-remove (one transaction,
    /// or one locked rewrite of its file), which custom providers shared by several writers should
    /// do too.
    func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String]

    /// Applies `changes` as one batch, as ``apply(_:)``, only if every key of `expected` holds
    /// the value given for it at that moment (`nil`: the key is absent); returns whether it did.
    /// A compare-and-set: a read-modify-write that loses no other writer's change reads the
    /// value, computes the new one, and tries again when this returns `false`.
    ///
    /// ```swift
    /// while true {    // a counter that several processes increment
    ///     let old = try store.value(forKey: "launches")
    ///     var count: Int64 = 0
    ///     if case .int(let stored)? = old { count = stored }
    ///     if try store.apply([.set("launches", .int(count + 1))], ifUnchanged: ["launches": old]) { break }
    /// }
    /// ```
    ///
    /// The default implementation reads the values, then applies with ``apply(_:)``: correct for
    /// a store that no other thread or process writes between the two. Every built-in provider
    /// overrides it with one atomic compare-and-apply (one transaction, one locked rewrite of its
    /// file, or for PostgreSQL one statement that checks the server's values as it commits),
    /// which custom providers shared by several writers should do too.
    func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool

    /// Where the provider keeps its data, to tell whether two providers (or a provider and a file
    /// about to be written) reach the same storage; `nil` when there is nothing to compare (the
    /// default, and a store in memory, which no other provider can reach).
    var storeIdentity: DefaultsStoreIdentity? { get }

    /// Calls `handler` with every change from now on, until the returned observation is
    /// cancelled or released.
    ///
    /// Handlers run after the provider has released its locks, so a handler may read or write the
    /// provider. Events arrive in commit order, one at a time (a handler is not called again
    /// before its call for the previous event returned; ``ChangeBroadcaster`` does this); they may
    /// arrive on any thread.
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation

    /// The count of the commits every process makes to this provider's storage, through which a
    /// ``CachingProvider`` in front stays coherent with other processes at the cost of one atomic
    /// load per read (see ``SharedChangeCounter``).
    ///
    /// The default, `nil`, means no cross-process coherence: a cache in front learns of other
    /// processes' changes only through this provider's events, so for a moment after another
    /// process's write returned, a cached read may still return the value it replaced (use
    /// ``CachingProvider/freshValue(forKey:)`` for a read that must not).
    var sharedChangeCounter: SharedChangeCounter? { get }

    /// Brings what this instance reads up to date with every change committed to its storage
    /// before the call, by any process, and reports those changes to observers.
    ///
    /// The default does nothing: right for a provider that reads its storage on every call.
    /// A provider that keeps a copy in memory (the JSON file backend) reads the storage again.
    func synchronize() throws(DefaultsError)

    /// Makes every change committed to this provider's storage before the call survive a power
    /// loss or an operating-system crash, whatever durability the store was opened with: what a
    /// move calls on its destination before it removes anything from its source
    /// (``moveAll(to:progress:)``, `anydefaults migrate --move`).
    ///
    /// The default does nothing: right for a provider whose every commit is durable already (the
    /// JSON file, `UserDefaults`, PostgreSQL, SQLite with `durability=full`, LMDB synced) or that
    /// keeps nothing. SQLite with `durability=normal` checkpoints its log, which syncs it; LMDB
    /// with `nosync` or `mapped` syncs its map.
    func makeDurable() throws(DefaultsError)

    // Writes from async code: the same operations, suspending the calling task instead of
    // blocking its thread while the backend works (see DefaultsProvider+Async.swift for the
    // default implementations, which suit local backends).

    /// Stores `value` under `key`, as ``setValue(_:forKey:)``, without blocking the calling thread.
    func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError)

    /// Removes `key`, as ``removeValue(forKey:)``, without blocking the calling thread.
    func removeValueAsync(forKey key: String) async throws(DefaultsError)

    /// Applies `changes` as one batch, as ``apply(_:)``, without blocking the calling thread.
    func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError)

    /// Removes every key, as ``removeAll()``, without blocking the calling thread.
    func removeAllAsync() async throws(DefaultsError)
}

extension DefaultsProvider {
    public var sharedChangeCounter: SharedChangeCounter? { nil }

    public func synchronize() throws(DefaultsError) {}

    public func makeDurable() throws(DefaultsError) {}

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try apply([.set(key, value)])
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try apply([.remove(key)])
    }

    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let existed = try value(forKey: key) != nil
        try removeValue(forKey: key)
        return existed
    }

    public func removeAll() throws(DefaultsError) {
        try apply(keys().map { .remove($0) })
    }

    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: "\(Self.self)")
        guard !expected.isEmpty else { return [] }
        let current = try allValues()
        let unchanged = expected.filter { current[$0.key] == $0.value }.map(\.key)
        try apply(unchanged.map { .remove($0) })
        return unchanged
    }

    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: "\(Self.self)")
        for (key, value) in try DefaultsValidation.canonicalConditions(expected, backend: "\(Self.self)") {
            guard try self.value(forKey: key) == value else { return false }
        }
        try apply(changes)
        return true
    }

    public var storeIdentity: DefaultsStoreIdentity? { nil }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        var result: [String: DefaultsValue] = [:]
        for key in try keys() {
            if let value = try value(forKey: key) { result[key] = value }
        }
        return result
    }

    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        let prefix = DefaultsKeyPrefix(prefix)
        return DefaultsKeyPrefix.sorted(try keys().filter(prefix.contains))
    }

    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        let prefix = DefaultsKeyPrefix(prefix)
        let values = try allValues()
        return prefix.isEmpty ? values : values.filter { prefix.contains($0.key) }
    }

    /// The changes from now on, as an asynchronous sequence. A consumer that reads more slowly
    /// than the store changes holds at most what `buffering` allows (by default the newest 1024
    /// events).
    ///
    /// ```swift
    /// for await event in store.changes() where event.key == "ui.theme" {
    ///     applyTheme(event.newValue)
    /// }
    /// ```
    public func changes(buffering: DefaultsBufferingPolicy = .default) -> AsyncStream<DefaultsChangeEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DefaultsChangeEvent.self, bufferingPolicy: buffering.streamPolicy())
        let observation = observe { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
