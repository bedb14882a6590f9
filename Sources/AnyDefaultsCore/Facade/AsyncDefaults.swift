/// The writes of a ``Defaults`` for async code: they suspend the task instead of blocking its
/// thread while the backend works. Get one from ``Defaults/async``.
///
/// ```swift
/// func save(_ theme: Theme) async throws {
///     try await defaults.async.set(theme, for: .theme)
///     try await defaults.async.write { tx in
///         tx[.volume] = 0.8
///         tx.removeObject(forKey: "legacy.volume")
///     }
/// }
/// ```
///
/// The synchronous writes (`set(_:forKey:)`, `defaults[.key] = value`) block their thread until
/// the backend has the value: a file sync for a local store, a round trip and a commit for a store
/// on a server such as PostgreSQL. In async code that thread is one of the few of Swift
/// concurrency's cooperative pool, so use these instead there. Reads need no async variant: they
/// are served from memory (the cache, or a backend's replica). Errors are thrown, as through
/// ``Defaults/throwing``; cancelling the task does not interrupt a write that has started.
public struct AsyncDefaults: Sendable {
    /// The store these operations act on.
    public let defaults: Defaults

    init(_ defaults: Defaults) {
        self.defaults = defaults
    }

    /// Stores `value` for `key`; for an optional `Value`, `nil` removes the stored value.
    public func set<Value>(_ value: Value, for key: DefaultsKey<Value>) async throws(DefaultsError) {
        try await set(value, fullKey: defaults.fullKey(key.name))
    }

    /// Removes the stored value of `key`, so that it reads as its default again.
    public func reset<Value>(_ key: DefaultsKey<Value>) async throws(DefaultsError) {
        try await remove(fullKey: defaults.fullKey(key.name))
    }

    /// Stores `value` under `key`; a `nil` removes the key.
    public func set<Value: DefaultsSerializable>(_ value: Value, forKey key: some DefaultsKeyName) async throws(DefaultsError) {
        try await set(value, fullKey: defaults.fullKey(key.defaultsKeyName))
    }

    /// Stores a `Codable` value under `key`; a `nil` removes the key.
    public func setCodable<T: Encodable>(
        _ value: T, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) async throws(DefaultsError) {
        let fullKey = defaults.fullKey(key.defaultsKeyName)
        guard let stored = try DefaultsEncoder(strategy: strategy).encodeIfPresent(value, forKey: fullKey) else {
            return try await remove(fullKey: fullKey)
        }
        try await defaults.provider.setValueAsync(stored, forKey: fullKey)
        defaults.forgetDecoded(fullKey)
    }

    /// Removes the value under `key`; removing an absent key is no error.
    public func removeValue(forKey key: some DefaultsKeyName) async throws(DefaultsError) {
        try await remove(fullKey: defaults.fullKey(key.defaultsKeyName))
    }

    /// Removes every stored key (within the scope), in one batch.
    public func removeAll() async throws(DefaultsError) {
        let prefix = defaults.prefix
        if prefix.isEmpty {
            try await defaults.provider.removeAllAsync()
        } else {
            let doomed = try defaults.provider.keys().filter { $0.hasPrefix(prefix) }
            if !doomed.isEmpty { try await defaults.provider.applyAsync(doomed.map { .remove($0) }) }
        }
        defaults.shared.decoded.removeAll(withPrefix: prefix)
    }

    /// Collects changes with `body`, then applies them as one batch, as ``Defaults/write(_:)``
    /// does, suspending while the batch is written.
    @discardableResult
    public func write<Result>(_ body: (inout DefaultsTransaction) throws -> Result) async throws -> Result {
        var transaction = DefaultsTransaction(defaults)
        let result = try body(&transaction)
        if let failure = transaction.failure { throw failure }
        let changes = transaction.changes
        guard !changes.isEmpty else { return result }
        try await defaults.provider.applyAsync(changes)
        for change in changes { defaults.forgetDecoded(change.key) }
        return result
    }

    private func set<Value: DefaultsSerializable>(_ value: Value, fullKey: String) async throws(DefaultsError) {
        guard let stored = try defaults.encodedForWrite(value, fullKey: fullKey) else { return try await remove(fullKey: fullKey) }
        try await defaults.provider.setValueAsync(stored, forKey: fullKey)
        if Value.cachesDecodedValue { defaults.forgetDecoded(fullKey) }
    }

    private func remove(fullKey: String) async throws(DefaultsError) {
        try await defaults.provider.removeValueAsync(forKey: fullKey)
        defaults.forgetDecoded(fullKey)
    }
}

extension Defaults {
    /// The writes of this store for async code, which suspend instead of blocking a thread of
    /// Swift concurrency's pool; see ``AsyncDefaults``.
    ///
    /// ```swift
    /// try await defaults.async.set(0.8, for: .volume)
    /// ```
    public var async: AsyncDefaults { AsyncDefaults(self) }
}
