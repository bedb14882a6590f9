// Reads through `Defaults` take part in Swift's Observation (see `ObservationTracker`).

extension Defaults {
    /// Records a typed read of `key` for Observation. Free for an unscoped store, whose full key
    /// is the key's name, so the key path the key carries applies.
    @inlinable
    func track<Value>(_ key: DefaultsKey<Value>) {
        if prefix.isEmpty {
            shared.tracker.access(key.observedKeyPath)
        } else {
            shared.tracker.access(key: fullKey(key.name))
        }
    }

    /// Records a read by name, if this store tracks those.
    @inlinable
    func trackByName(_ fullKey: String) {
        if shared.tracksReadsByName { shared.tracker.access(key: fullKey) }
    }

    /// Whether reads by name (`integer(forKey:)`, `string(forKey:)`...) take part in
    /// Observation; typed reads, `@Default` properties and ``DefaultsModel`` properties always do.
    public var tracksReadsByName: Bool { shared.tracksReadsByName }

    /// This store without a scope's prefix (itself when unscoped).
    var unscoped: Defaults {
        prefix.isEmpty ? self : Defaults(provider: provider, prefix: "", shared: shared)
    }

    /// A typed key for `name` in this store, whose key path for Observation comes from the
    /// store's table rather than being built anew (for wrappers, created often).
    func makeKey<Value>(_ name: String, default defaultValue: Value) -> DefaultsKey<Value> {
        DefaultsKey(name, default: defaultValue, observedKeyPath: shared.tracker.keyPath(for: name))
    }
}
