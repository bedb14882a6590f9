import Foundation

// The three container kinds of ``ValueDecoder``. A `nil` is an absent key: `decodeNil(forKey:)`
// is true for a key that is not there, and decoding an optional type at an absent key gives nil.

struct KeyedValueDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let entries: [String: DefaultsValue]

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    private func entry(_ key: Key) throws -> DefaultsValue {
        guard let value = entries[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for key \"\(key.stringValue)\"."))
        }
        return value
    }

    private func read<T>(_ key: Key, _ convert: (DefaultsValue) throws(ScalarMismatch) -> T) throws -> T {
        try decoder.read(entry(key), at: key, convert)
    }

    func decodeNil(forKey key: Key) throws -> Bool { entries[key.stringValue] == nil }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key, ScalarConversion.bool) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key, ScalarConversion.string) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key, ScalarConversion.double) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(key, ScalarConversion.float) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(key, ScalarConversion.integer) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(key, ScalarConversion.integer) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(key, ScalarConversion.integer) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(key, ScalarConversion.integer) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(key, ScalarConversion.integer) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(key, ScalarConversion.integer) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(key, ScalarConversion.integer) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(key, ScalarConversion.integer) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(key, ScalarConversion.integer) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(key, ScalarConversion.integer) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if entries[key.stringValue] == nil, let absent = absentValue(of: T.self) { return absent }
        return try decoder.decode(T.self, from: entry(key), at: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let value = entries["super"] else {
            throw DecodingError.keyNotFound(NameCodingKey("super"), .init(codingPath: codingPath, debugDescription: "No value for key \"super\"."))
        }
        return try decoder.child(value, at: NameCodingKey("super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }

    private func child(_ key: Key) throws -> ValueDecoder { try decoder.child(entry(key), at: key) }
}

struct UnkeyedValueDecoding: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let elements: [DefaultsValue]
    private(set) var currentIndex = 0

    init(decoder: ValueDecoder, elements: [DefaultsValue]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var key: IndexCodingKey { IndexCodingKey(currentIndex) }

    private func next(_ type: Any.Type) throws -> DefaultsValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "The array has no more elements."))
        }
        return elements[currentIndex]
    }

    /// Reads the next element; the index moves on only when it was read.
    private mutating func read<T>(_ convert: (DefaultsValue) throws(ScalarMismatch) -> T) throws -> T {
        let result = try decoder.read(next(T.self), at: key, convert)
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        _ = try next(Never.self)
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(ScalarConversion.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try read(ScalarConversion.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(ScalarConversion.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try read(ScalarConversion.float) }
    mutating func decode(_ type: Int.Type) throws -> Int { try read(ScalarConversion.integer) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read(ScalarConversion.integer) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read(ScalarConversion.integer) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read(ScalarConversion.integer) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let result = try decoder.decode(T.self, from: next(T.self), at: key)
        currentIndex += 1
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try nextChild().container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try nextChild().unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = try nextChild()
        currentIndex += 1
        return decoder
    }

    private func nextChild() throws -> ValueDecoder { try decoder.child(next(Any.self), at: key) }
}

struct SingleValueDecoding: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    private func read<T>(_ convert: (DefaultsValue) throws(ScalarMismatch) -> T) throws -> T {
        try decoder.read(decoder.value, at: nil, convert)
    }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { try read(ScalarConversion.bool) }
    func decode(_ type: String.Type) throws -> String { try read(ScalarConversion.string) }
    func decode(_ type: Double.Type) throws -> Double { try read(ScalarConversion.double) }
    func decode(_ type: Float.Type) throws -> Float { try read(ScalarConversion.float) }
    func decode(_ type: Int.Type) throws -> Int { try read(ScalarConversion.integer) }
    func decode(_ type: Int8.Type) throws -> Int8 { try read(ScalarConversion.integer) }
    func decode(_ type: Int16.Type) throws -> Int16 { try read(ScalarConversion.integer) }
    func decode(_ type: Int32.Type) throws -> Int32 { try read(ScalarConversion.integer) }
    func decode(_ type: Int64.Type) throws -> Int64 { try read(ScalarConversion.integer) }
    func decode(_ type: UInt.Type) throws -> UInt { try read(ScalarConversion.integer) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try read(ScalarConversion.integer) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try read(ScalarConversion.integer) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try read(ScalarConversion.integer) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try read(ScalarConversion.integer) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decode(T.self, from: decoder.value, at: nil)
    }
}
