import AnyDefaultsCore
import Synchronization

/// A provider that keeps values in memory: the reference implementation of the contract, and the
/// store for tests and previews.
///
/// Thread-safe, with atomic batches and change events. Nothing persists beyond the instance.
///
/// ```swift
/// let store = InMemoryProvider(["onboarded": .bool(true)])
/// try store.apply([.set("a", .int(1)), .remove("b")])
/// ```
public final class InMemoryProvider: DefaultsProvider {
    static let backend = "Memory"

    private let storage: Mutex<[String: DefaultsValue]>
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
        storage = Mutex(values)
    }

    public var capabilities: DefaultsCapabilities { [.atomicBatch] }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        return storage.withLock { $0[key] }
    }

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try apply([.set(key, value)])
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try apply([.remove(key)])
    }

    public func keys() throws(DefaultsError) -> [String] {
        storage.withLock { Array($0.keys) }
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        storage.withLock { $0 }
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
