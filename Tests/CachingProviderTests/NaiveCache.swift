import AnyDefaultsCore
import Synchronization

/// The obvious cache, kept to show what the coherence tests catch: it fills after reading and
/// updates after writing, with nothing tying the two to the order of the upstream's commits.
final class NaiveCache<Upstream: DefaultsProvider>: DefaultsProvider {
    let upstream: Upstream
    private let entries = Mutex<[String: DefaultsValue?]>([:])

    init(_ upstream: Upstream) { self.upstream = upstream }

    var capabilities: DefaultsCapabilities { upstream.capabilities }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let value = try upstream.value(forKey: key)
        entries.withLock { $0[key] = .some(value) }
        return value
    }

    func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try apply([.set(key, value)])
    }

    func removeValue(forKey key: String) throws(DefaultsError) {
        try apply([.remove(key)])
    }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let needed = entries.withLock { entries in changes.filter { entries[$0.key] != .some($0.value) } }
        guard !needed.isEmpty else { return }
        try upstream.apply(needed)
        entries.withLock { entries in
            for change in needed { entries[change.key] = .some(change.value) }
        }
    }

    func keys() throws(DefaultsError) -> [String] { try upstream.keys() }

    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        upstream.observe(handler)
    }

    func invalidate(_ key: String) { _ = entries.withLock { $0.removeValue(forKey: key) } }

    func invalidateAll() { entries.withLock { $0.removeAll() } }

    func cachedEntry(forKey key: String) -> DefaultsValue?? { entries.withLock { $0[key] } }
}

/// A cache whose entries the tests can inspect.
protocol InspectableCache: DefaultsProvider {
    func cachedEntry(forKey key: String) -> DefaultsValue??
    func invalidate(_ key: String)
    func invalidateAll()
}

extension NaiveCache: InspectableCache {}
extension CachingProvider: InspectableCache {}
