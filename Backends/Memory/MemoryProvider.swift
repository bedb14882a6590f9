import AnyDefaultsCore
import Synchronization

/// A provider that keeps values in memory: the reference implementation of the contract, and the
/// store for tests and previews.
///
/// Thread-safe, with atomic batches and change events. Nothing persists beyond the instance.
///
/// ```swift
/// let store = MemoryProvider(["onboarded": .bool(true)])
/// try store.apply([.set("a", .int(1)), .remove("b")])
/// ```
public final class MemoryProvider: DefaultsProvider {
    static let backend = "Memory"

    private let storage: Mutex<KeyedValues>
    private let broadcaster = ChangeBroadcaster()

    /// Creates a store holding `initialValues`.
    ///
    /// Invalid entries (an empty key, a value nested too deeply) are left out; use
    /// ``apply(_:)`` to have them reported.
    public init(_ initialValues: [String: DefaultsValue] = [:]) {
        var values: [String: DefaultsValue] = [:]
        for (key, value) in initialValues {
            guard let key = try? DefaultsValidation.canonicalKey(key, backend: Self.backend),
                (try? DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend)) != nil
            else { continue }
            values[key] = value
        }
        storage = Mutex(KeyedValues(values))
    }

    public var capabilities: DefaultsCapabilities { [.atomicBatch] }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        return storage.withLock { $0[key] }
    }


    // One key written without building a batch: the hot path of `Defaults` over memory.

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend)
        let turn = storage.withLock { storage -> ChangeBroadcaster.Turn? in
            guard storage.update(value, forKey: key) else { return nil }
            return broadcaster.enqueueTurn(DefaultsChangeEvent(key: key, newValue: value))
        }
        broadcaster.deliver(turn)
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try removeValueIfPresent(forKey: key)
    }

    /// Removes `key` under the store's lock and tells whether it was there.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        let (existed, turn) = storage.withLock { storage -> (Bool, ChangeBroadcaster.Turn?) in
            guard storage.removeValue(forKey: key) != nil else { return (false, nil) }
            return (true, broadcaster.enqueueTurn(DefaultsChangeEvent(key: key, newValue: nil)))
        }
        broadcaster.deliver(turn)
        return existed
    }

    public func keys() throws(DefaultsError) -> [String] {
        storage.withLock { Array($0.keys) }
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        storage.withLock { $0.values }
    }

    /// The keys under `prefix`, from the ordered index: no scan of the other keys.
    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        let prefix = DefaultsKeyPrefix(prefix)
        return storage.withLock { $0.keys(withPrefix: prefix) }
    }

    /// The values under `prefix`, read under one lock from the ordered index.
    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        let prefix = DefaultsKeyPrefix(prefix)
        return storage.withLock { $0.values(withPrefix: prefix) }
    }

    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        storage.withLock { storage in
            var events: [DefaultsChangeEvent] = []
            for change in changes {
                let old = storage[change.key]
                guard old != change.value else { continue }
                storage[change.key] = change.value
                events.append(DefaultsChangeEvent(key: change.key, newValue: change.value))
            }
            broadcaster.enqueue(events)
        }
        broadcaster.deliverPending()
    }

    public func removeAll() throws(DefaultsError) {
        storage.withLock { storage in
            broadcaster.enqueue(storage.keys.map { DefaultsChangeEvent(key: $0, newValue: nil) })
            storage.removeAll()
        }
        broadcaster.deliverPending()
    }

    /// Compares and applies under the store's lock: atomic against every other thread.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        let expected = try DefaultsValidation.canonicalConditions(expected, backend: Self.backend)
        let applied = storage.withLock { storage in
            guard expected.allSatisfy({ storage[$0.key] == $0.value }) else { return false }
            var events: [DefaultsChangeEvent] = []
            for change in changes where storage[change.key] != change.value {
                storage[change.key] = change.value
                events.append(DefaultsChangeEvent(key: change.key, newValue: change.value))
            }
            broadcaster.enqueue(events)
            return true
        }
        broadcaster.deliverPending()
        return applied
    }

    /// Removes the unchanged keys under the store's lock: atomic against every other thread.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: Self.backend)
        let removed = storage.withLock { storage in
            var removed: [String] = []
            for (key, value) in expected where storage[key] == value {
                storage.removeValue(forKey: key)
                removed.append(key)
            }
            broadcaster.enqueue(removed.map { DefaultsChangeEvent(key: $0, newValue: nil) })
            return removed
        }
        broadcaster.deliverPending()
        return removed
    }

    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        broadcaster.observe(handler)
    }

    // Writes to memory never block, so the async variants run inline rather than on another thread.

    public func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        try setValue(value, forKey: key)
    }

    public func removeValueAsync(forKey key: String) async throws(DefaultsError) {
        try removeValue(forKey: key)
    }

    public func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError) {
        try apply(changes)
    }

    public func removeAllAsync() async throws(DefaultsError) {
        try removeAll()
    }
}
