/// A parsed JSON value with the byte offset where it starts, so that the layer that gives it a
/// meaning can report the position of a value it rejects.
struct JSONNode: Sendable {
    enum Value: Sendable {
        case null
        case bool(Bool)
        /// A number as written; `isInteger` when it has neither a fraction nor an exponent.
        case number(String, isInteger: Bool)
        case string(String)
        case array([JSONNode])
        /// Members in file order, duplicates included (the reader does not judge keys).
        case object([JSONMember])
    }

    var value: Value
    var offset: Int
}

extension JSONNode.Value {
    /// The kind of value, as used in messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One `"key": value` member of a JSON object.
struct JSONMember: Sendable {
    var key: String
    var keyOffset: Int
    var node: JSONNode
}
