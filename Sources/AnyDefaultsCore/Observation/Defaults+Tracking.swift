// Reads through `Defaults` take part in Swift's Observation (see `ObservationTracker`).

extension Defaults {
    /// Records a typed read of `key` for Observation, then runs `read` with the key's full key.
    /// Cheap for an unscoped store, whose full key is the key's name, so the key path the key
    /// carries applies; the name is lent to `read` in place (returned, it would be retained and
    /// released on every read).
    @inlinable
    func tracking<Value, Result, Failure: Error>(
        _ key: DefaultsKey<Value>, _ read: (String) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if isScoped { return try read(trackScoped(key.name)) }
        tracker.access(key.observedKeyPath)
        return try read(key.name)
    }

    /// Records a typed read of `name` in a scoped store and returns its full key. Kept out of
    /// line, so that the inlined read path of an unscoped store stays small.
    @usableFromInline @inline(never)
    func trackScoped(_ name: String) -> String {
        let fullKey = prefix + name
        tracker.access(key: fullKey)
        return fullKey
    }

    /// Records a read by name, if this store tracks those.
    @inlinable
    func trackByName(_ fullKey: String) {
        if shared.tracksReadsByName { tracker.access(key: fullKey) }
    }

    /// The value of a typed key, as `defaults[key]` reads it, without recording the read for
    /// Observation: for code that tells its observers of changes itself, such as a settings
    /// model that ignores changes made elsewhere.
    ///
    /// ```swift
    /// let volume = defaults.untrackedValue(of: .volume)
    /// ```
    @inlinable
    public func untrackedValue<Value>(of key: DefaultsKey<Value>) -> Value {
        value(of: key, fullKey: fullKey(key.name))
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
