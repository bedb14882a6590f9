/// The values a ``DefaultsSchema`` snapshot is made of: one consistent read of its keys, and the
/// store to report a value that cannot be read to. The macro's expansions call its members.
public struct DefaultsSchemaValues: Sendable {
    /// The values read, by key (relative to the store's scope).
    public let snapshot: DefaultsSnapshot
    /// The store they were read from.
    public let store: Defaults

    /// The values in `snapshot`, read from `store`.
    public init(snapshot: DefaultsSnapshot, store: Defaults) {
        (self.snapshot, self.store) = (snapshot, store)
    }

    /// The value stored (or registered) under `key`, or else `defaultValue`. A value that cannot be
    /// read as `Value` is reported to the store's error handler and reads as `defaultValue`.
    public func value<Value: DefaultsSerializable>(forKey key: String, default defaultValue: Value) -> Value {
        guard let stored = snapshot[key] else { return defaultValue }
        do {
            return try Value(defaultsValue: stored)
        } catch {
            var error = error
            error.key = error.key ?? store.prefix + key
            store.report(error)
            return defaultValue
        }
    }

    /// Records `value` under `key` in `transaction` if it differs from `old` (`nil` records a
    /// removal).
    public static func write<Value: DefaultsSerializable>(
        _ value: Value, old: Value, forKey key: String, to transaction: inout DefaultsTransaction
    ) {
        guard !DefaultsSchemaEquality.equal(value, old) else { return }
        transaction.set(value, forKey: key)
    }
}
