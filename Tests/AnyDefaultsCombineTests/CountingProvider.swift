import AnyDefaultsCombine
import Synchronization

/// An in-memory provider that counts every call that reaches it and the observations still
/// registered, for tests that check a store was not touched, or was let go of.
final class CountingProvider: DefaultsProvider {
    private let store: MemoryProvider
    private let calls = Atomic(0)
    private let observing = Atomic(0)

    init(_ values: [String: DefaultsValue] = [:]) {
        store = MemoryProvider(values)
    }

    /// Every call so far: reads, writes, listings and observations.
    var callCount: Int { calls.load(ordering: .relaxed) }
    /// The observations registered and not yet cancelled.
    var observationCount: Int { observing.load(ordering: .relaxed) }

    private func count() {
        calls.add(1, ordering: .relaxed)
    }

    var capabilities: DefaultsCapabilities { store.capabilities }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        count()
        return try store.value(forKey: key)
    }

    func keys() throws(DefaultsError) -> [String] {
        count()
        return try store.keys()
    }

    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        count()
        return try store.allValues()
    }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        count()
        try store.apply(changes)
    }

    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        count()
        observing.add(1, ordering: .relaxed)
        let observation = store.observe(handler)
        return DefaultsObservation { [self] in
            observation.cancel()
            observing.subtract(1, ordering: .relaxed)
        }
    }
}
