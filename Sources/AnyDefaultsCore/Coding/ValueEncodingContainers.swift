import Foundation

// The three container kinds of ``ValueEncoder``. Every primitive overload stores its
// `DefaultsValue` at once; integers wider than Int64 are an error, never wrapped.

struct KeyedValueEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    let node: EncodingNode

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func put(_ value: DefaultsValue, _ key: Key) { node.keyed[key.stringValue] = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { node.keyed[key.stringValue] = .null }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(try encoder.integer(value, at: key), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(try encoder.integer(value, at: key), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.keyed[key.stringValue] = try encoder.slot(for: value, at: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = encoder.child(EncodingNode(shape: .keyed, path: codingPath + [key]), at: key)
        node.keyed[key.stringValue] = .node(child.node)
        return KeyedEncodingContainer(KeyedValueEncoding<NestedKey>(encoder: child, node: child.node))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = encoder.child(EncodingNode(shape: .unkeyed, path: codingPath + [key]), at: key)
        node.keyed[key.stringValue] = .node(child.node)
        return UnkeyedValueEncoding(encoder: child, node: child.node)
    }

    mutating func superEncoder() -> any Encoder { superEncoder(at: NameCodingKey("super")) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(at: key) }

    private func superEncoder(at key: any CodingKey) -> any Encoder {
        let child = encoder.child(EncodingNode(), at: key)
        node.keyed[key.stringValue] = .node(child.node)
        return child
    }
}

struct UnkeyedValueEncoding: UnkeyedEncodingContainer, PrimitiveEncoding {
    let encoder: ValueEncoder
    let node: EncodingNode

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { node.unkeyed.count }

    var nextKey: (any CodingKey)? { indexKey }
    private var indexKey: IndexCodingKey { IndexCodingKey(count) }
    func put(_ value: DefaultsValue) { node.unkeyed.append(.value(value)) }

    mutating func encodeNil() throws {
        throw encoder.encodingError("An array cannot hold nil: a store has no null value.", path: codingPath + [indexKey])
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let slot = try encoder.slot(for: value, at: indexKey)
        if case .null = slot {
            throw encoder.encodingError("An array cannot hold nil: a store has no null value.", path: codingPath + [indexKey])
        }
        node.unkeyed.append(slot)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = indexKey
        let child = encoder.child(EncodingNode(shape: .keyed, path: codingPath + [key]), at: key)
        node.unkeyed.append(.node(child.node))
        return KeyedEncodingContainer(KeyedValueEncoding<NestedKey>(encoder: child, node: child.node))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = indexKey
        let child = encoder.child(EncodingNode(shape: .unkeyed, path: codingPath + [key]), at: key)
        node.unkeyed.append(.node(child.node))
        return UnkeyedValueEncoding(encoder: child, node: child.node)
    }

    mutating func superEncoder() -> any Encoder {
        let child = encoder.child(EncodingNode(), at: indexKey)
        node.unkeyed.append(.node(child.node))
        return child
    }
}

struct SingleValueEncoding: SingleValueEncodingContainer, PrimitiveEncoding {
    let encoder: ValueEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    var nextKey: (any CodingKey)? { nil }
    func put(_ value: DefaultsValue) { encoder.node.single = .value(value) }

    mutating func encodeNil() throws { encoder.node.single = .null }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.node.single = try encoder.slot(for: value, at: nil)
    }
}

/// The primitive overloads, which `UnkeyedEncodingContainer` and `SingleValueEncodingContainer`
/// declare alike: each stores its value through `put`.
protocol PrimitiveEncoding {
    var encoder: ValueEncoder { get }
    /// The key of the value being written: its index in an array, `nil` in a single value.
    var nextKey: (any CodingKey)? { get }
    func put(_ value: DefaultsValue)
}

extension PrimitiveEncoding {
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(try encoder.integer(value, at: nextKey)) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { put(try encoder.integer(value, at: nextKey)) }
}
