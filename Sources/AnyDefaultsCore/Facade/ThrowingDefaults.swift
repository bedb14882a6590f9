/// The operations of a ``Defaults`` that throw their errors, for callers who want to handle
/// them; get one from ``Defaults/throwing``.
///
/// ```swift
/// do {
///     let layout = try defaults.throwing.value(for: .layout)
///     try defaults.throwing.set(layout.adding(column), for: .layout)
/// } catch where error.code == .decodingFailed {
///     print(error.message)          // "Cannot decode Layout at layout.columns[2]: ..."
/// }
/// ```
///
/// Absent keys are not errors: typed keys give their default, other reads give `nil`.
public struct ThrowingDefaults: Sendable {
    /// The store these operations act on.
    public let defaults: Defaults

    init(_ defaults: Defaults) {
        self.defaults = defaults
    }

    // MARK: Typed keys

    /// The value stored for `key`, or else its registered default, or else `key.defaultValue`.
    ///
    /// - Throws: the provider's errors; ``DefaultsError/Code-swift.struct/typeMismatch`` or
    ///   ``DefaultsError/Code-swift.struct/decodingFailed`` if the stored value cannot be read
    ///   as `Value`.
    @inlinable
    public func value<Value>(for key: DefaultsKey<Value>) throws(DefaultsError) -> Value {
        try defaults.tracking(key) { fullKey throws(DefaultsError) in
            try defaults.read(Value.self, fullKey: fullKey, key: key) ?? key.defaultValue
        }
    }

    /// The value of `key`, as ``value(for:)``.
    @inlinable
    public subscript<Value>(key: DefaultsKey<Value>) -> Value {
        get throws(DefaultsError) { try value(for: key) }
    }

    /// Stores `value` for `key`; for an optional `Value`, `nil` removes the stored value.
    public func set<Value>(_ value: Value, for key: DefaultsKey<Value>) throws(DefaultsError) {
        try defaults.write(value, of: key, fullKey: defaults.checkedFullKey(key.name), mayBeAbsent: key.valueIsOptional)
    }

    /// Removes the stored value of `key`, so that it reads as its default again.
    public func reset<Value>(_ key: DefaultsKey<Value>) throws(DefaultsError) {
        try defaults.remove(fullKey: defaults.checkedFullKey(key.name))
    }

    // MARK: Keys by name

    /// The value stored under `key`, or else its registered default; `nil` if neither exists.
    public func value(forKey key: some DefaultsKeyName) throws(DefaultsError) -> DefaultsValue? {
        let fullKey = try defaults.checkedFullKey(key.defaultsKeyName)
        defaults.trackByName(fullKey)
        return try defaults.lookup(fullKey)
    }

    /// The value under `key` read as `Value`; `nil` if nothing is stored or registered.
    ///
    /// ```swift
    /// let count: Int? = try defaults.throwing.value(forKey: "launchCount")
    /// ```
    public func value<Value: DefaultsSerializable>(
        _ type: Value.Type = Value.self, forKey key: some DefaultsKeyName
    ) throws(DefaultsError) -> Value? {
        let fullKey = try defaults.checkedFullKey(key.defaultsKeyName)
        defaults.trackByName(fullKey)
        return try defaults.read(Value.self, fullKey: fullKey)
    }

    /// Stores `value` under `key`; a `nil` removes the key.
    public func set<Value: DefaultsSerializable>(_ value: Value, forKey key: some DefaultsKeyName) throws(DefaultsError) {
        try defaults.write(value, fullKey: defaults.checkedFullKey(key.defaultsKeyName))
    }

    /// The `Codable` value under `key`; `nil` if nothing is stored or registered.
    ///
    /// Decoding happens once per change of the stored value; later reads reuse the result.
    public func codable<T: Decodable & Sendable>(
        _ type: T.Type = T.self, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) throws(DefaultsError) -> T? {
        let fullKey = try defaults.checkedFullKey(key.defaultsKeyName)
        defaults.trackByName(fullKey)
        return try defaults.readCodable(T.self, fullKey: fullKey, strategy: strategy)
    }

    /// Stores a `Codable` value under `key`; a `nil` removes the key.
    public func setCodable<T: Encodable>(
        _ value: T, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) throws(DefaultsError) {
        let fullKey = try defaults.checkedFullKey(key.defaultsKeyName)
        guard let stored = try DefaultsEncoder(strategy: strategy).encodeIfPresent(value, forKey: fullKey) else {
            return try defaults.remove(fullKey: fullKey)
        }
        try defaults.store(stored, fullKey: fullKey)
    }

    /// Whether the store holds a value under `key` (registered defaults do not count).
    public func hasValue(forKey key: some DefaultsKeyName) throws(DefaultsError) -> Bool {
        let fullKey = try defaults.checkedFullKey(key.defaultsKeyName)
        defaults.trackByName(fullKey)
        return try hasStoredValue(fullKey: fullKey)
    }

    /// Whether the store holds a value under a full key, without tracking the read.
    func hasStoredValue(fullKey: String) throws(DefaultsError) -> Bool {
        try defaults.provider.value(forKey: fullKey) != nil
    }

    /// Removes the value under `key`; removing an absent key is no error.
    public func removeValue(forKey key: some DefaultsKeyName) throws(DefaultsError) {
        try defaults.remove(fullKey: defaults.checkedFullKey(key.defaultsKeyName))
    }

    /// Removes the value under `key` and returns whether there was one, in one atomic step on
    /// every built-in backend (see ``DefaultsProvider/removeValueIfPresent(forKey:)``).
    ///
    /// ```swift
    /// guard try defaults.throwing.removeValueIfPresent(forKey: "session.token") else { return .notFound }
    /// ```
    @discardableResult
    public func removeValueIfPresent(forKey key: some DefaultsKeyName) throws(DefaultsError) -> Bool {
        let fullKey = try defaults.checkedFullKey(key.defaultsKeyName)
        let existed = try defaults.provider.removeValueIfPresent(forKey: fullKey)
        defaults.forgetDecoded(fullKey)
        return existed
    }

    // MARK: Many keys

    /// The stored keys (within the scope, without its prefix), in no particular order. A scoped
    /// store asks the provider for the keys under its prefix (``DefaultsProvider/keys(withPrefix:)``),
    /// served by the backend's index.
    public func keys() throws(DefaultsError) -> [String] {
        defaults.shared.tracker.accessEveryKey()
        guard defaults.isScoped else { return try defaults.provider.keys() }
        return try keys(withPrefix: "")
    }

    /// The stored keys (within the scope, without its prefix) that start with `prefix`, sorted by
    /// their UTF-8 bytes: a prefix query of the store's index (``DefaultsProvider/keys(withPrefix:)``,
    /// where ``DefaultsKeyPrefix`` says what "start with" means). The empty prefix is every key.
    ///
    /// ```swift
    /// let plans = try defaults.scoped("tenant/acme/").throwing.keys(withPrefix: "plan.")
    /// ```
    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        defaults.shared.tracker.accessEveryKey()
        let scope = DefaultsKeyPrefix(defaults.prefix)
        return try defaults.provider.keys(withPrefix: defaults.prefix + prefix).compactMap(scope.remainder(of:))
    }

    /// Removes every stored key that starts with `prefix` (see ``keys(withPrefix:)``), in one
    /// batch: the keys under the prefix come from the store's index, then one
    /// ``DefaultsProvider/apply(_:)`` removes them all or, where the backend is atomic, none.
    ///
    /// ```swift
    /// try defaults.throwing.removeValues(withPrefix: "cache.")
    /// ```
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidKey`` for an empty prefix, which would
    ///   name every key: a computed prefix that came out empty must not empty the store. Call
    ///   ``removeAll()`` to mean that.
    public func removeValues(withPrefix prefix: String) throws(DefaultsError) {
        guard !prefix.isEmpty else {
            throw DefaultsError(
                .invalidKey, "An empty prefix would remove every key; call removeAll() for that.", backend: "Defaults")
        }
        // The scope's prefix joined as keys(withPrefix:) joins it, never through fullKey(_:),
        // which maps a name the scope cannot hold to the empty key: that would name every key.
        try removeStoredValues(withFullPrefix: defaults.prefix + prefix)
    }

    /// Removes every stored key under the full (scoped) prefix `fullPrefix`, in one batch.
    private func removeStoredValues(withFullPrefix fullPrefix: String) throws(DefaultsError) {
        let doomed = try defaults.provider.keys(withPrefix: fullPrefix)
        if !doomed.isEmpty {
            try defaults.provider.apply(doomed.map { .remove($0) })
        }
        defaults.shared.decoded.removeAll(withPrefix: fullPrefix)
    }

    /// Removes every stored key (within the scope).
    public func removeAll() throws(DefaultsError) {
        if defaults.prefix.isEmpty {
            try defaults.provider.removeAll()
            defaults.shared.decoded.removeAll(withPrefix: "")
        } else {
            try removeStoredValues(withFullPrefix: defaults.prefix)
        }
    }
}
