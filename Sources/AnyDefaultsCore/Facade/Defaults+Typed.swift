// Typed keys and Codable values. Failures go to the error handler; reads then give the default.

extension Defaults {
    /// The value of a typed key: what is stored, or else the registered default, or else
    /// `key.defaultValue`. Assigning stores the value; for an optional key, assigning `nil`
    /// removes it.
    ///
    /// ```swift
    /// extension DefaultsKeys {
    ///     static let volume = DefaultsKey<Double>("volume", default: 0.5)
    /// }
    /// defaults[.volume] = 0.8
    /// defaults[.volume] += 0.1
    /// ```
    @inlinable
    public subscript<Value>(key: DefaultsKey<Value>) -> Value {
        get {
            tracking(key) { fullKey in value(of: key, fullKey: fullKey) }
        }
        set {
            set(newValue, for: key)
        }
    }

    /// The value of `key` stored under `fullKey`, or its default; errors go to the handler.
    @inlinable
    func value<Value>(of key: DefaultsKey<Value>, fullKey: String) -> Value {
        do {
            return try read(Value.self, fullKey: fullKey, key: key) ?? key.defaultValue
        } catch {
            return recover(error, fullKey: fullKey, fallback: key.defaultValue)
        }
    }

    @usableFromInline
    func set<Value>(_ value: Value, for key: DefaultsKey<Value>) {
        reporting { () throws(DefaultsError) in
            try write(value, of: key, fullKey: fullKey(key.name), mayBeAbsent: key.valueIsOptional)
        }
    }

    /// Removes the stored value of `key`, so that it reads as its default again.
    public func reset<Value>(_ key: DefaultsKey<Value>) {
        reporting { () throws(DefaultsError) in try throwing.reset(key) }
    }

    /// Whether the store holds a value for `key` (its default does not count).
    public func hasValue<Value>(_ key: DefaultsKey<Value>) -> Bool {
        tracking(key) { fullKey in
            do throws(DefaultsError) {
                return try throwing.hasStoredValue(fullKey: fullKey)
            } catch {
                report(error)
                return false
            }
        }
    }

    /// The value under `key` read as `Value`; `nil` if nothing is stored or registered, or if
    /// the stored value cannot be read as `Value` (reported).
    ///
    /// ```swift
    /// let theme = defaults.value(Theme.self, forKey: "theme") ?? .light
    /// ```
    public func value<Value: DefaultsSerializable>(_ type: Value.Type = Value.self, forKey key: some DefaultsKeyName) -> Value? {
        let fullKey = fullKey(key.defaultsKeyName)
        trackByName(fullKey)
        do {
            return try read(Value.self, fullKey: fullKey)
        } catch {
            return recover(error, fullKey: fullKey, fallback: nil)
        }
    }

    /// The `Codable` value under `key`, or `nil` if there is none or it cannot be decoded
    /// (reported). Decoding happens once per change of the stored value.
    ///
    /// ```swift
    /// struct Layout: Codable { var columns: Int }
    /// defaults.setCodable(Layout(columns: 3), forKey: "layout")
    /// let layout: Layout? = defaults.codable(forKey: "layout")
    /// // A value another library stored as JSON data:
    /// let legacy = defaults.codable(Layout.self, forKey: "old.layout", strategy: .jsonData)
    /// ```
    public func codable<T: Decodable & Sendable>(
        _ type: T.Type = T.self, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) -> T? {
        let fullKey = fullKey(key.defaultsKeyName)
        trackByName(fullKey)
        do {
            return try readCodable(T.self, fullKey: fullKey, strategy: strategy)
        } catch {
            return recover(error, fullKey: fullKey, fallback: nil)
        }
    }

    /// Stores a `Codable` value under `key` (see ``DefaultsEncoder``); `nil` removes the key.
    public func setCodable<T: Encodable>(
        _ value: T, forKey key: some DefaultsKeyName, strategy: DefaultsCodingStrategy = .structured
    ) {
        reporting { () throws(DefaultsError) in try throwing.setCodable(value, forKey: key, strategy: strategy) }
    }

    /// Runs `operation`, sending its error to the handler.
    func reporting(_ operation: () throws(DefaultsError) -> Void) {
        do {
            try operation()
        } catch {
            report(error)
        }
    }
}
