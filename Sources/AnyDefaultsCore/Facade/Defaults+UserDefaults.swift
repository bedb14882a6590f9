import Foundation

// The familiar `UserDefaults` methods. Reads follow `UserDefaults` (see `LenientConversion`):
// numbers convert into one another, strings are parsed, and an absent or unconvertible value
// reads as `0`, `false` or `nil`. Failures of the store go to the error handler.

extension Defaults {
    /// The value stored under `key`, or else its registered default.
    @inlinable
    public func value(forKey key: some DefaultsKeyName) -> DefaultsValue? {
        lookup(key) { $0 }
    }

    /// The value under `key` as plain Swift values (`Bool`, `Int`, `Double`, `String`, `Data`,
    /// `Date`, `[any Sendable]`, `[String: any Sendable]`), as `UserDefaults` returns objects.
    public func object(forKey key: some DefaultsKeyName) -> (any Sendable)? {
        lookup(key) { $0.plainValue }
    }

    /// The string under `key`; a number reads as its text. `nil` for other values.
    @inlinable
    public func string(forKey key: some DefaultsKeyName) -> String? {
        lookup(key) { LenientConversion.string($0) }
    }

    /// The integer under `key`: a `Double` is truncated, a `Bool` is 0 or 1, a numeric string
    /// is parsed; `0` when absent or not a number. A number beyond `Int`'s range is reported
    /// and reads as `0`.
    @inlinable
    public func integer(forKey key: some DefaultsKeyName) -> Int {
        switch lookup(key, { LenientConversion.integer($0) }) {
        case .value(let int): return int
        case .outOfRange:
            reportOutOfRange(Int.self, forKey: fullKey(key.defaultsKeyName))
            return 0
        case .notANumber, nil: return 0
        }
    }

    @usableFromInline
    func reportOutOfRange(_ type: Any.Type, forKey fullKey: String) {
        report(DefaultsError(.typeMismatch, "Cannot read \(type) at \(fullKey): the stored number does not fit in \(type).",
                             backend: "Defaults", key: fullKey))
    }

    /// The number under `key` (integers, `Bool` and numeric strings convert); `0` otherwise.
    @inlinable
    public func double(forKey key: some DefaultsKeyName) -> Double {
        lookup(key) { LenientConversion.double($0) } ?? 0
    }

    /// ``double(forKey:)`` as a `Float`.
    @inlinable
    public func float(forKey key: some DefaultsKeyName) -> Float {
        Float(double(forKey: key))
    }

    /// The Boolean under `key`: `true` for `true`, a non-zero number, or the strings
    /// `"true"`/`"yes"` (any case) and non-zero numbers; `false` otherwise.
    @inlinable
    public func bool(forKey key: some DefaultsKeyName) -> Bool {
        lookup(key) { LenientConversion.bool($0) } ?? false
    }

    /// The data under `key`, or `nil`.
    public func data(forKey key: some DefaultsKeyName) -> Data? {
        lookup(key) { if case .data(let data) = $0 { data } else { nil } }
    }

    /// The date under `key`, or `nil`.
    public func date(forKey key: some DefaultsKeyName) -> Date? {
        lookup(key) { if case .date(let date) = $0 { date } else { nil } }
    }

    /// The URL under `key`: an absolute URL string, or a file path starting with `/` or `~`.
    public func url(forKey key: some DefaultsKeyName) -> URL? {
        lookup(key) { LenientConversion.url($0) }
    }

    /// The array under `key` as plain Swift values, or `nil`.
    public func array(forKey key: some DefaultsKeyName) -> [any Sendable]? {
        lookup(key) { if case .array(let items) = $0 { items.map(\.plainValue) } else { nil } }
    }

    /// The array of strings under `key`, or `nil` if it is not an array of strings only.
    public func stringArray(forKey key: some DefaultsKeyName) -> [String]? {
        lookup(key) { try? [String](defaultsValue: $0) }
    }

    /// The dictionary under `key` as plain Swift values, or `nil`.
    public func dictionary(forKey key: some DefaultsKeyName) -> [String: any Sendable]? {
        lookup(key) { if case .dictionary(let entries) = $0 { entries.mapValues(\.plainValue) } else { nil } }
    }

    /// Stores `value` under `key`. Any ``DefaultsSerializable`` value works: `Bool`, numbers,
    /// `String`, `Data`, `Date`, `URL`, arrays and dictionaries of them, ``DefaultsValue``; a
    /// `nil` removes the key.
    ///
    /// ```swift
    /// defaults.set(42, forKey: "answer")
    /// defaults.set(["a", "b"], forKey: "recent")
    /// defaults.set(["width": 800, "title": "Main"] as DefaultsValue, forKey: "window")
    /// ```
    public func set<Value: DefaultsSerializable>(_ value: Value, forKey key: some DefaultsKeyName) {
        reporting { () throws(DefaultsError) in try throwing.set(value, forKey: key) }
    }

    /// Removes the value under `key`; removing an absent key does nothing.
    public func removeObject(forKey key: some DefaultsKeyName) {
        reporting { () throws(DefaultsError) in try throwing.removeValue(forKey: key) }
    }

    /// Adds registered defaults: values read for keys the store holds nothing for. They live in
    /// memory only and are never written to the store; registering a key again replaces its
    /// registered value.
    ///
    /// ```swift
    /// defaults.register(defaults: ["volume": 0.5, "theme": "light", "recent": []])
    /// ```
    public func register(defaults registrations: [String: DefaultsValue]) {
        let prefixed = prefix.isEmpty ? registrations : Dictionary(
            registrations.map { (fullKey($0.key), $0.value) }, uniquingKeysWith: { _, last in last })
        shared.registered.withLock { $0.merge(prefixed) { _, new in new } }
        for key in prefixed.keys { shared.tracker.didChange(key, keyPath: nil) }
    }

    /// Whether the store holds a value under `key` (registered defaults do not count).
    public func hasValue(forKey key: some DefaultsKeyName) -> Bool {
        do {
            return try throwing.hasValue(forKey: key)
        } catch {
            report(error)
            return false
        }
    }

    /// The stored keys (within the scope, without its prefix), in no particular order.
    public func keys() -> [String] {
        do {
            return try throwing.keys()
        } catch {
            report(error)
            return []
        }
    }

    /// The stored keys (within the scope, without its prefix) that start with `prefix`, sorted
    /// by their UTF-8 bytes, from the store's index; see ``ThrowingDefaults/keys(withPrefix:)``.
    public func keys(withPrefix prefix: String) -> [String] {
        do {
            return try throwing.keys(withPrefix: prefix)
        } catch {
            report(error)
            return []
        }
    }

    /// Removes every stored key that starts with `prefix`, in one batch; see
    /// ``ThrowingDefaults/removeValues(withPrefix:)``. An empty prefix removes nothing and
    /// reports ``DefaultsError/Code-swift.struct/invalidKey``: call ``removeAll()`` to remove
    /// every key.
    public func removeValues(withPrefix prefix: String) {
        reporting { () throws(DefaultsError) in try throwing.removeValues(withPrefix: prefix) }
    }

    /// Removes every stored key (within the scope).
    public func removeAll() {
        reporting { () throws(DefaultsError) in try throwing.removeAll() }
    }

    /// Reads `key` (stored, else registered) and converts it; `nil` if absent or on an error
    /// (reported).
    @inlinable
    func lookup<T>(_ key: some DefaultsKeyName, _ convert: (DefaultsValue) -> T?) -> T? {
        let fullKey = fullKey(key.defaultsKeyName)
        trackByName(fullKey)
        do {
            return try lookup(fullKey).flatMap(convert)
        } catch {
            report(error)
            return nil
        }
    }
}
