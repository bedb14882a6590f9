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
/// let store: any DefaultsProvider = InMemoryProvider()
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

    /// Every stored key, in no particular order.
    func keys() throws(DefaultsError) -> [String]

    /// Every stored key with its value.
    func allValues() throws(DefaultsError) -> [String: DefaultsValue]

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

    /// Where the provider keeps its data, to tell whether two providers (or a provider and a file
    /// about to be written) reach the same storage; `nil` when there is nothing to compare (the
    /// default, and a store in memory, which no other provider can reach).
    var storeIdentity: DefaultsStoreIdentity? { get }

    /// Calls `handler` with every change from now on, until the returned observation is
    /// cancelled or released.
    ///
    /// Handlers run after the provider has released its locks, so a handler may read or write the
    /// provider. Events arrive in commit order; they may arrive on any thread.
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation

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
    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try apply([.set(key, value)])
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try apply([.remove(key)])
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

    public var storeIdentity: DefaultsStoreIdentity? { nil }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        var result: [String: DefaultsValue] = [:]
        for key in try keys() {
            if let value = try value(forKey: key) { result[key] = value }
        }
        return result
    }

    /// The changes from now on, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await event in store.changes() where event.key == "ui.theme" {
    ///     applyTheme(event.newValue)
    /// }
    /// ```
    public func changes() -> AsyncStream<DefaultsChangeEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DefaultsChangeEvent.self)
        let observation = observe { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
