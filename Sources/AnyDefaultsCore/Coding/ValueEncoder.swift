import Foundation

/// A value being encoded: either finished, or a container still being filled.
enum EncodedSlot {
    case value(DefaultsValue)
    /// `encodeNil()`: dropped from a dictionary (an absent key), an error inside an array.
    case null
    case node(EncodingNode)
}

/// A container under construction. A reference, because `Codable` hands out containers that
/// are filled after they have been placed in their parent.
final class EncodingNode {
    enum Shape { case empty, single, keyed, unkeyed }

    var shape = Shape.empty
    var single = EncodedSlot.null
    var keyed: [String: EncodedSlot] = [:]
    var unkeyed: [EncodedSlot] = []
    /// Whether the elements of an unkeyed container come in no meaningful order (a `Set`): they
    /// are then stored sorted, so that equal sets encode to equal values.
    var isUnordered = false
    /// A misuse found while encoding where no error can be thrown (a container of a second
    /// shape, a container nested too deeply); thrown when the value is finished.
    var problem: (message: String, path: [any CodingKey])?

    init() {}

    init(shape: Shape, path: [any CodingKey]) {
        self.shape = shape
        checkDepth(path)
    }

    /// Makes this node a container of `shape`, once; asking again for the same shape shares it.
    func become(_ shape: Shape, path: [any CodingKey]) {
        if self.shape == .empty {
            self.shape = shape
            checkDepth(path)
        } else if self.shape != shape, problem == nil {
            problem = ("A value asked for containers of two different kinds.", path)
        }
    }

    private func checkDepth(_ path: [any CodingKey]) {
        guard shape == .keyed || shape == .unkeyed, path.count >= DefaultsValue.maximumNestingDepth else { return }
        if problem == nil {
            problem = ("The value nests deeper than \(DefaultsValue.maximumNestingDepth) levels.", path)
        }
    }

    /// The slot a parent stores for this node: a single value is stored as itself.
    var slot: EncodedSlot {
        switch shape {
        case .single where problem == nil: single
        case .empty: .value(.dictionary([:]))   // a type that encoded nothing, as JSONEncoder does
        default: .node(self)
        }
    }
}

/// The `Encoder` that ``DefaultsEncoder`` hands to `encode(to:)`.
struct ValueEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    /// How many `encode(to:)` calls enclose this one, to stop runaway recursion.
    let level: Int

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.become(.keyed, path: codingPath)
        return KeyedEncodingContainer(KeyedValueEncoding<Key>(encoder: self, node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.become(.unkeyed, path: codingPath)
        return UnkeyedValueEncoding(encoder: self, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        node.become(.single, path: codingPath)
        return SingleValueEncoding(encoder: self)
    }

    /// An encoder for a child at `key` (or at the same place, for `nil`), filling `node`.
    func child(_ node: EncodingNode, at key: (any CodingKey)?) -> ValueEncoder {
        ValueEncoder(node: node, codingPath: key.map { codingPath + [$0] } ?? codingPath, userInfo: userInfo, level: level + 1)
    }

    /// Encodes `value` found at `key` into a slot.
    func slot<T: Encodable>(for value: T, at key: (any CodingKey)?) throws -> EncodedSlot {
        if let scalar = try scalar(value, at: key) { return .value(scalar) }
        let path = key.map { codingPath + [$0] } ?? codingPath
        if path.count > DefaultsValue.maximumNestingDepth || level >= 2 * DefaultsValue.maximumNestingDepth {
            throw encodingError("The value nests deeper than \(DefaultsValue.maximumNestingDepth) levels.", path: path)
        }
        let node = EncodingNode()
        try value.encode(to: child(node, at: key))
        node.isUnordered = value is any UnorderedCollection
        return node.slot
    }

    /// The stored form of the types `DefaultsValue` holds natively, or `nil` for other types.
    func scalar<T>(_ value: T, at key: (any CodingKey)?) throws -> DefaultsValue? {
        switch value {
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Double: return .double(value)
        case let value as Int: return .int(Int64(value))
        case let value as Date: return .date(value)
        case let value as Data: return .data(value)
        case let value as URL: return .string(value.absoluteString)
        case let value as UUID: return .string(value.uuidString)
        case let value as Float: return .double(Double(value))
        case let value as Decimal: return ScalarConversion.storedDecimal(value)
        case let value as Int8: return try integer(value, at: key)
        case let value as Int16: return try integer(value, at: key)
        case let value as Int32: return try integer(value, at: key)
        case let value as Int64: return .int(value)
        case let value as UInt: return try integer(value, at: key)
        case let value as UInt8: return try integer(value, at: key)
        case let value as UInt16: return try integer(value, at: key)
        case let value as UInt32: return try integer(value, at: key)
        case let value as UInt64: return try integer(value, at: key)
        default: return nil
        }
    }

    func integer<T: FixedWidthInteger>(_ value: T, at key: (any CodingKey)?) throws -> DefaultsValue {
        guard let stored = ScalarConversion.storedInteger(value) else {
            let path = key.map { codingPath + [$0] } ?? codingPath
            throw encodingError("A \(T.self) larger than Int64.max cannot be stored.", path: path)
        }
        return stored
    }

    func encodingError(_ message: String, path: [any CodingKey]) -> EncodingFailure {
        EncodingFailure(message: message, codingPath: path)
    }
}

/// An encoding failure found by ``ValueEncoder``; it carries no value, only where and why.
struct EncodingFailure: Error {
    var message: String
    var codingPath: [any CodingKey]
}

/// Turns a finished node tree into a ``DefaultsValue``.
enum EncodedTree {
    /// The value of `slot`, or `nil` for a `nil` (nothing to store).
    static func finish(_ slot: EncodedSlot, path: [any CodingKey]) throws(EncodingFailure) -> DefaultsValue? {
        switch slot {
        case .value(let value): return value
        case .null: return nil
        case .node(let node): return try finish(node, path: path)
        }
    }

    private static func finish(_ node: EncodingNode, path: [any CodingKey]) throws(EncodingFailure) -> DefaultsValue? {
        if let problem = node.problem {
            throw EncodingFailure(message: problem.message, codingPath: problem.path)
        }
        switch node.shape {
        case .empty:
            return .dictionary([:])
        case .single:
            return try finish(node.single, path: path)
        case .keyed:
            var result: [String: DefaultsValue] = [:]
            result.reserveCapacity(node.keyed.count)
            for (key, slot) in node.keyed {
                if let value = try finish(slot, path: path + [NameCodingKey(key)]) { result[key] = value }
            }
            return .dictionary(result)
        case .unkeyed:
            var result: [DefaultsValue] = []
            result.reserveCapacity(node.unkeyed.count)
            for (index, slot) in node.unkeyed.enumerated() {
                let elementPath = path + [IndexCodingKey(index)]
                guard let value = try finish(slot, path: elementPath) else {
                    throw EncodingFailure(message: "An array cannot hold nil: a store has no null value.", codingPath: elementPath)
                }
                result.append(value)
            }
            if node.isUnordered { result.sort { $0.storagePrecedes($1) } }
            return .array(result)
        }
    }
}

/// A collection whose iteration order means nothing and may differ between equal values and
/// between runs (a `Set`'s follows per-process hash seeds).
protocol UnorderedCollection {}

extension Set: UnorderedCollection {}
