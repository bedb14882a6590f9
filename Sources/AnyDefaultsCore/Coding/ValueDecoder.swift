import Foundation

/// The `Decoder` that ``DefaultsDecoder`` hands to `init(from:)`.
///
/// It throws the standard `DecodingError`s, so that types which catch them keep working; the
/// contexts describe the kind of value found, never the value.
struct ValueDecoder: Decoder {
    let value: DefaultsValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    /// How many `init(from:)` calls enclose this one, to stop runaway recursion.
    let level: Int

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let entries) = value else {
            throw mismatch([String: Any].self, "a dictionary")
        }
        return KeyedDecodingContainer(KeyedValueDecoding<Key>(decoder: self, entries: entries))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw mismatch([Any].self, "an array")
        }
        return UnkeyedValueDecoding(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoding(decoder: self)
    }

    private func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected \(expected), found \(value.typeName)."))
    }

    /// Decodes `value`, found at `key` below this decoder (or here, for `nil`), as a `T`.
    func decode<T: Decodable>(_ type: T.Type, from value: DefaultsValue, at key: (any CodingKey)?) throws -> T {
        if let scalar = try scalar(type, from: value, at: key) { return scalar }
        return try T(from: child(value, at: key))
    }

    /// A decoder for `value`, found at `key` below this decoder (or here, for `nil`).
    func child(_ value: DefaultsValue, at key: (any CodingKey)?) throws -> ValueDecoder {
        let path = key.map { codingPath + [$0] } ?? codingPath
        if path.count > DefaultsValue.maximumNestingDepth || level >= 2 * DefaultsValue.maximumNestingDepth {
            throw DecodingError.dataCorrupted(.init(
                codingPath: path,
                debugDescription: "The value nests deeper than \(DefaultsValue.maximumNestingDepth) levels."))
        }
        return ValueDecoder(value: value, codingPath: path, userInfo: userInfo, level: level + 1)
    }

    /// The types `DefaultsValue` holds natively, read by the shared ``ScalarConversion`` rules;
    /// `nil` for other types.
    private func scalar<T>(_ type: T.Type, from value: DefaultsValue, at key: (any CodingKey)?) throws -> T? {
        do {
            switch type {
            case is String.Type: return try ScalarConversion.string(value) as? T
            case is Bool.Type: return try ScalarConversion.bool(value) as? T
            case is Double.Type: return try ScalarConversion.double(value) as? T
            case is Int.Type: return try ScalarConversion.integer(value, as: Int.self) as? T
            case is Date.Type: return try ScalarConversion.date(value) as? T
            case is Data.Type: return try ScalarConversion.data(value) as? T
            case is URL.Type: return try ScalarConversion.url(value) as? T
            case is UUID.Type: return try ScalarConversion.uuid(value) as? T
            case is Float.Type: return try ScalarConversion.float(value) as? T
            case is Decimal.Type: return try ScalarConversion.decimal(value) as? T
            case is Int8.Type: return try ScalarConversion.integer(value, as: Int8.self) as? T
            case is Int16.Type: return try ScalarConversion.integer(value, as: Int16.self) as? T
            case is Int32.Type: return try ScalarConversion.integer(value, as: Int32.self) as? T
            case is Int64.Type: return try ScalarConversion.integer(value, as: Int64.self) as? T
            case is UInt.Type: return try ScalarConversion.integer(value, as: UInt.self) as? T
            case is UInt8.Type: return try ScalarConversion.integer(value, as: UInt8.self) as? T
            case is UInt16.Type: return try ScalarConversion.integer(value, as: UInt16.self) as? T
            case is UInt32.Type: return try ScalarConversion.integer(value, as: UInt32.self) as? T
            case is UInt64.Type: return try ScalarConversion.integer(value, as: UInt64.self) as? T
            default: return nil
            }
        } catch {
            throw decodingError(error, T.self, at: key)
        }
    }

    /// Reads a primitive with one of the ``ScalarConversion`` functions, mapping its failure
    /// to a `DecodingError` at `key`.
    func read<T>(
        _ value: DefaultsValue, at key: (any CodingKey)?,
        _ convert: (DefaultsValue) throws(ScalarMismatch) -> T
    ) throws -> T {
        do {
            return try convert(value)
        } catch {
            throw decodingError(error, T.self, at: key)
        }
    }

    func decodingError(_ mismatch: ScalarMismatch, _ type: Any.Type, at key: (any CodingKey)?) -> DecodingError {
        let path = key.map { codingPath + [$0] } ?? codingPath
        let context = DecodingError.Context(codingPath: path, debugDescription: mismatch.reason.prefix(1).uppercased() + mismatch.reason.dropFirst() + ".")
        return switch mismatch.kind {
        case .wrongType: .typeMismatch(type, context)
        case .outOfRange, .invalidFormat: .dataCorrupted(context)
        }
    }
}
