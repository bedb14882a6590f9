// Compile-time hints for a `Codable` type that has not opted in with `DefaultsCodable`: without
// these, `defaults.set(layout, forKey: "layout")` fails with "requires that 'Layout' conform to
// 'DefaultsSerializable'", which does not say what to do. Each overload is unavailable (it can
// never be called) and disfavoured (a type that is both Codable and DefaultsSerializable, such as
// `Int`, still picks the real method).

extension Defaults {
    @available(*, unavailable, message: "a Codable type is stored once it adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}', or call setCodable(_:forKey:)")
    @_disfavoredOverload
    public func set<Value: Encodable>(_ value: Value, forKey key: some DefaultsKeyName) {}

    @available(*, unavailable, message: "a Codable type is read once it adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}', or call codable(_:forKey:)")
    @_disfavoredOverload
    public func value<Value: Decodable>(_ type: Value.Type = Value.self, forKey key: some DefaultsKeyName) -> Value? { nil }
}

extension ThrowingDefaults {
    @available(*, unavailable, message: "a Codable type is stored once it adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}', or call setCodable(_:forKey:)")
    @_disfavoredOverload
    public func set<Value: Encodable>(_ value: Value, forKey key: some DefaultsKeyName) throws(DefaultsError) {}

    @available(*, unavailable, message: "a Codable type is read once it adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}', or call codable(_:forKey:)")
    @_disfavoredOverload
    public func value<Value: Decodable>(_ type: Value.Type = Value.self, forKey key: some DefaultsKeyName) throws(DefaultsError) -> Value? { nil }
}

extension DefaultsTransaction {
    @available(*, unavailable, message: "a Codable type is stored once it adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}', or call setCodable(_:forKey:)")
    @_disfavoredOverload
    public mutating func set<Value: Encodable>(_ value: Value, forKey key: some DefaultsKeyName) {}

    @available(*, unavailable, message: "a Codable type is read once it adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}', or call codable(_:forKey:)")
    @_disfavoredOverload
    public func value<Value: Decodable>(_ type: Value.Type = Value.self, forKey key: some DefaultsKeyName) -> Value? { nil }
}
