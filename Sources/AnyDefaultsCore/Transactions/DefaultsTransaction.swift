/// The changes of a ``Defaults/write(_:)`` call, collected and applied together as one batch.
///
/// ```swift
/// try defaults.write { tx in
///     tx[.volume] = 0.8
///     tx.set("dark", forKey: "ui.theme")
///     tx.removeObject(forKey: "ui.legacyTheme")
///     tx[.launchCount] += 1            // reads see the transaction's own writes
/// }
/// ```
///
/// Reads of keys the transaction has written give what it wrote; other reads go to the store as
/// it is now (a transaction does not isolate reads from other writers). A value that cannot be
/// encoded makes the whole transaction fail when it ends, with nothing applied.
public struct DefaultsTransaction {
    /// The store the transaction writes to.
    public let defaults: Defaults

    /// The value each written key will hold (`nil` for a removal), by full key.
    private var written: [String: DefaultsValue?] = [:]
    /// The written keys, in the order they were first written.
    private var order: [String] = []
    /// The first error met while collecting the changes.
    private(set) var failure: DefaultsError?

    init(_ defaults: Defaults) {
        self.defaults = defaults
    }

    /// The changes to apply, one per key, each the key's final value.
    var changes: [DefaultsChange] {
        order.map { key in written[key].flatMap { $0 }.map { .set(key, $0) } ?? .remove(key) }
    }

    // MARK: Typed keys

    /// The value of a typed key, as the transaction leaves it; assigning records a write (for an
    /// optional key, `nil` records a removal).
    public subscript<Value>(key: DefaultsKey<Value>) -> Value {
        get {
            do {
                return try value(for: key)
            } catch {
                defaults.report(error)
                return key.defaultValue
            }
        }
        set {
            set(newValue, forKey: key.name)
        }
    }

    /// The value of a typed key, as the subscript, throwing when the value cannot be read as
    /// `Value` or the store fails.
    public func value<Value>(for key: DefaultsKey<Value>) throws(DefaultsError) -> Value {
        let fullKey = defaults.fullKey(key.name)
        guard let stored = try lookup(fullKey) else { return key.defaultValue }
        do {
            return try Value(defaultsValue: stored)
        } catch {
            throw error.located(at: fullKey)
        }
    }

    /// Records the removal of `key`'s value.
    public mutating func reset<Value>(_ key: DefaultsKey<Value>) {
        record(nil, fullKey: defaults.fullKey(key.name))
    }

    // MARK: Keys by name

    /// The value under `key` as the transaction leaves it, or else its registered default.
    /// An error of the store is reported and reads as `nil`.
    public func value(forKey key: some DefaultsKeyName) -> DefaultsValue? {
        do {
            return try lookup(defaults.fullKey(key.defaultsKeyName))
        } catch {
            defaults.report(error)
            return nil
        }
    }

    /// The value under `key` read as `Value`; `nil` if there is none or it cannot be read as
    /// `Value`.
    public func value<Value: DefaultsSerializable>(_ type: Value.Type = Value.self, forKey key: some DefaultsKeyName) -> Value? {
        value(forKey: key).flatMap { try? Value(defaultsValue: $0) }
    }

    /// Whether the store will hold a value under `key` (a registered default does not count).
    public func hasValue(forKey key: some DefaultsKeyName) -> Bool {
        let fullKey = defaults.fullKey(key.defaultsKeyName)
        if let written = written[fullKey] { return written != nil }
        return defaults.storedValue(fullKey) != nil
    }

    /// Records storing `value` under `key`; `nil` records a removal.
    public mutating func set<Value: DefaultsSerializable>(_ value: Value, forKey key: some DefaultsKeyName) {
        let fullKey = defaults.fullKey(key.defaultsKeyName)
        guard !isAbsent(value) else { return record(nil, fullKey: fullKey) }
        do {
            record(try value.defaultsValue, fullKey: fullKey)
        } catch {
            fail(error.located(at: fullKey))
        }
    }

    /// Records storing a `Codable` value under `key` (see ``DefaultsEncoder``); `nil` records a
    /// removal.
    public mutating func setCodable<T: Encodable>(
        _ value: T, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) {
        let fullKey = defaults.fullKey(key.defaultsKeyName)
        do {
            record(try DefaultsEncoder(strategy: strategy).encodeIfPresent(value, forKey: fullKey), fullKey: fullKey)
        } catch {
            fail(error)
        }
    }

    /// The `Codable` value under `key` as the transaction leaves it; `nil` if there is none or
    /// it cannot be decoded.
    public func codable<T: Decodable>(
        _ type: T.Type = T.self, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) -> T? {
        value(forKey: key).flatMap { try? DefaultsDecoder(strategy: strategy).decode(T.self, from: $0) }
    }

    /// Records the removal of `key`.
    public mutating func removeObject(forKey key: some DefaultsKeyName) {
        record(nil, fullKey: defaults.fullKey(key.defaultsKeyName))
    }

    /// Records the removal of every key in the store (within the scope), including those written
    /// earlier in this transaction.
    public mutating func removeAll() {
        do {
            for key in try defaults.throwing.keys() { removeObject(forKey: key) }
        } catch {
            fail(error)
        }
        for fullKey in order { record(nil, fullKey: fullKey) }
    }

    // MARK: Internals

    /// The value a full key holds as the transaction leaves it, or else its registered default.
    private func lookup(_ fullKey: String) throws(DefaultsError) -> DefaultsValue? {
        if let written = written[fullKey] {
            return written ?? defaults.registeredValue(fullKey)
        }
        return try defaults.lookup(fullKey)
    }

    private mutating func record(_ value: DefaultsValue?, fullKey: String) {
        if written.index(forKey: fullKey) == nil { order.append(fullKey) }
        written.updateValue(value, forKey: fullKey)
    }

    private mutating func fail(_ error: DefaultsError) {
        if failure == nil { failure = error }
    }
}
