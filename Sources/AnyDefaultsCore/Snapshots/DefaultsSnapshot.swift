/// An immutable copy of a store's values (all of them, or chosen keys) at one moment, with typed
/// access by key.
///
/// ```swift
/// let snapshot = defaults.snapshot()
/// let volume = snapshot[.volume]            // typed: stored, else registered, else the default
/// let theme = snapshot["ui.theme"]          // the DefaultsValue, if any
///
/// for await snapshot in defaults.snapshots(keys: [DefaultsKeys.volume, DefaultsKeys.theme]) {
///     render(snapshot)                      // the current one first, then one per change
/// }
/// ```
///
/// A snapshot never changes: later writes to the store do not show in it. It is a value, cheap
/// to copy and `Sendable`, so it fits in the state of a state-management store. Keys are those of
/// the ``Defaults`` it was taken from (without a scope's prefix). A key left out of a snapshot of
/// chosen keys reads as absent.
public struct DefaultsSnapshot: Sendable, Hashable {
    /// The stored values, by key.
    public let values: [String: DefaultsValue]
    /// The registered defaults of the store when the snapshot was taken, for the same keys.
    public let registeredDefaults: [String: DefaultsValue]

    /// A snapshot of the given values, with registered defaults read when a key has no value.
    public init(values: [String: DefaultsValue], registeredDefaults: [String: DefaultsValue] = [:]) {
        self.values = values
        self.registeredDefaults = registeredDefaults
    }

    /// The stored keys, in no particular order.
    public var keys: Dictionary<String, DefaultsValue>.Keys { values.keys }

    /// Whether a value was stored under `key` (a registered default does not count).
    public func hasValue(forKey key: some DefaultsKeyName) -> Bool {
        values[key.defaultsKeyName] != nil
    }

    /// The value stored under `key`, or else its registered default.
    public subscript(key: some DefaultsKeyName) -> DefaultsValue? {
        let name = key.defaultsKeyName
        return values[name] ?? registeredDefaults[name]
    }

    /// The value of a typed key: what was stored, or else the registered default, or else the
    /// key's default. A stored value that cannot be read as `Value` reads as the key's default;
    /// use ``value(for:)`` to get the error.
    public subscript<Value>(key: DefaultsKey<Value>) -> Value {
        (try? value(for: key)) ?? key.defaultValue
    }

    /// The value of a typed key, as the subscript, throwing when the stored value cannot be read
    /// as `Value`.
    public func value<Value>(for key: DefaultsKey<Value>) throws(DefaultsError) -> Value {
        guard let value = self[key.name] else { return key.defaultValue }
        do {
            return try Value(defaultsValue: value)
        } catch {
            throw error.located(at: key.name)
        }
    }

    /// The value under `key` read as `Value`; `nil` if there is none or it cannot be read as
    /// `Value`.
    public func value<Value: DefaultsSerializable>(_ type: Value.Type = Value.self, forKey key: some DefaultsKeyName) -> Value? {
        self[key].flatMap { try? Value(defaultsValue: $0) }
    }

    /// The `Codable` value under `key`; `nil` if there is none or it cannot be decoded.
    public func codable<T: Decodable>(
        _ type: T.Type = T.self, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) -> T? {
        self[key].flatMap { try? DefaultsDecoder(strategy: strategy).decode(T.self, from: $0) }
    }
}
