import Foundation

/// Reads the text of a JSON settings file back into the contents of a store, accepting exactly
/// what ``JSONFileEncoder`` writes plus the variations a person editing the file may produce
/// (any whitespace and member order, `\u` escapes, integers inside `$double` and `$date`,
/// `$date` text with an offset).
///
/// Every rejection is a ``JSONFileParseError`` with the line and column of the offending value.
/// Works with an explicit stack, so a deeply nested file cannot exhaust the thread's stack.
package enum JSONFileDecoder {
    /// The deepest JSON nesting read: every value level may be wrapped in `$dict`, plus the top
    /// level object and a scalar's tag.
    static let maximumJSONDepth = 2 * DefaultsValue.maximumNestingDepth + 2

    package static func decode(_ text: [UInt8]) throws(JSONFileParseError) -> [String: DefaultsValue] {
        let root = try JSONReader.parse(text, maximumDepth: maximumJSONDepth)
        guard case .object(let members) = root.value else {
            throw JSONFileParseError(
                "the top level must be a JSON object that maps each key to its value, not \(root.value.kindName)",
                at: root.offset, in: text)
        }
        let decoder = Decoding(text: text)
        var result: [String: DefaultsValue] = [:]
        result.reserveCapacity(members.count)
        for member in members {
            guard let key = try? DefaultsValidation.canonicalKey(member.key, backend: ExactJSON.backend) else {
                throw JSONFileParseError("a key must not be empty", at: member.keyOffset, in: text)
            }
            let value = try decoder.value(of: member.node)
            guard result.updateValue(value, forKey: key) == nil else {
                throw decoder.duplicate(key, at: member.keyOffset)
            }
        }
        return result
    }

    /// Reads the text of one value (what ``JSONFileEncoder/encode(value:)`` writes, or any plain
    /// JSON value but `null`).
    static func decodeValue(_ text: [UInt8]) throws(JSONFileParseError) -> DefaultsValue {
        let root = try JSONReader.parse(text, maximumDepth: maximumJSONDepth)
        return try Decoding(text: text).value(of: root)
    }

    private struct Decoding {
        let text: [UInt8]

        /// An array or dictionary being filled.
        private struct Frame {
            var items: [JSONNode] = []
            var members: [JSONMember] = []
            var isArray: Bool
            var next = 0
            var array: [DefaultsValue] = []
            var dictionary: [String: DefaultsValue] = [:]
            /// Where this container goes in its parent, when the parent is a dictionary.
            var key = ""
            var keyOffset = 0
            var offset: Int

            var count: Int { isArray ? items.count : members.count }
        }

        private enum Start {
            case value(DefaultsValue)
            case container(Frame)
        }

        func value(of root: JSONNode) throws(JSONFileParseError) -> DefaultsValue {
            var stack: [Frame] = []
            switch try start(root) {
            case .value(let value): return value
            case .container(let frame): stack.append(frame)
            }
            while let top = stack.indices.last {
                var finished: DefaultsValue
                var key = ""
                var keyOffset = 0
                let next = stack[top].next
                if next < stack[top].count {
                    stack[top].next += 1
                    let node: JSONNode
                    if stack[top].isArray {
                        node = stack[top].items[next]
                    } else {
                        let member = stack[top].members[next]
                        (node, key, keyOffset) = (member.node, member.key, member.keyOffset)
                    }
                    switch try start(node) {
                    case .value(let value):
                        finished = value
                    case .container(var frame):
                        guard stack.count < DefaultsValue.maximumNestingDepth else {
                            throw error(
                                "values nest deeper than \(DefaultsValue.maximumNestingDepth) levels of arrays and dictionaries",
                                at: frame.offset)
                        }
                        (frame.key, frame.keyOffset) = (key, keyOffset)
                        stack.append(frame)
                        continue
                    }
                } else {
                    let frame = stack.removeLast()
                    finished = frame.isArray ? .array(frame.array) : .dictionary(frame.dictionary)
                    guard !stack.isEmpty else { return finished }
                    (key, keyOffset) = (frame.key, frame.keyOffset)
                }
                let parent = stack.count - 1
                if stack[parent].isArray {
                    stack[parent].array.append(finished)
                } else if stack[parent].dictionary.updateValue(finished, forKey: key) != nil {
                    // A key inside a value is part of the value, which may be a secret: not named.
                    throw duplicate(nil, at: keyOffset)
                }
            }
            // The loop returns when the outermost container closes.
            throw error("internal error: unbalanced containers", at: root.offset)
        }

        /// A scalar's value, or a new frame for a container.
        private func start(_ node: JSONNode) throws(JSONFileParseError) -> Start {
            switch node.value {
            case .null:
                throw error("null cannot be stored; remove the member or give it a value", at: node.offset)
            case .bool(let value):
                return .value(.bool(value))
            case .number(let literal, let isInteger):
                if isInteger {
                    guard let value = Int64(literal) else {
                        throw error(
                            "the integer is outside the 64-bit range; write it with a fraction or exponent (1.0e20) to store a double",
                            at: node.offset)
                    }
                    return .value(.int(value))
                }
                return .value(.double(try double(literal, at: node.offset)))
            case .string(let value):
                return .value(.string(value))
            case .array(let items):
                return .container(Frame(items: items, isArray: true, offset: node.offset))
            case .object(let members):
                if members.count == 1, members[0].key.hasPrefix("$") {
                    return try tagged(members[0])
                }
                return .container(Frame(members: members, isArray: false, offset: node.offset))
            }
        }

        private func tagged(_ member: JSONMember) throws(JSONFileParseError) -> Start {
            let node = member.node
            switch JSONFileTag(rawValue: member.key) {
            case .double:
                guard let value = try nonFiniteOrNumber(node) else {
                    throw error(#"$double takes "nan", "inf", "-inf" or a number"#, at: node.offset)
                }
                return .value(.double(value))
            case .date:
                var interval = try nonFiniteOrNumber(node)
                if interval == nil, case .string(let text) = node.value {
                    interval = ExactTimestamp.interval(from: text)
                }
                guard let interval else {
                    throw error(
                        #"$date takes a UTC date and time like "2024-05-01T12:00:00Z", seconds since 2001-01-01T00:00:00Z, "nan", "inf" or "-inf""#,
                        at: node.offset)
                }
                return .value(.date(Date(timeIntervalSinceReferenceDate: interval)))
            case .data:
                guard case .string(let text) = node.value, let data = Data(base64Encoded: text) else {
                    throw error("$data takes a base64 string", at: node.offset)
                }
                return .value(.data(data))
            case .dictionary:
                guard case .object(let members) = node.value else {
                    throw error("$dict takes an object", at: node.offset)
                }
                return .container(Frame(members: members, isArray: false, offset: node.offset))
            case nil:
                let known = JSONFileTag.allCases.map(\.rawValue).joined(separator: ", ")
                // The member's name is not quoted: inside a value it is part of the value.
                throw error(
                    #"an object with one member whose name starts with '$' is a tagged value (\#(known)), and this name is not one; write such a dictionary as {"$dict": {...}}"#,
                    at: member.keyOffset)
            }
        }

        /// The value of `node` if it is a number or names a non-finite double; `nil` otherwise.
        private func nonFiniteOrNumber(_ node: JSONNode) throws(JSONFileParseError) -> Double? {
            switch node.value {
            case .number(let literal, _): try double(literal, at: node.offset)
            case .string(let name): JSONFileTag.nonFiniteValue(name)
            default: nil
            }
        }

        private func double(_ literal: String, at offset: Int) throws(JSONFileParseError) -> Double {
            // The reader checked the JSON number grammar, which Double's parser accepts. Other
            // parsers read a magnitude beyond Double's range as an infinity and a tiny one as 0:
            // a different value than written, so refused here, for every JSON input.
            switch ExactJSON.double(fromLiteral: literal) {
            case .success(let value): return value
            case .failure(let problem): throw error(problem.reason, at: offset)
            }
        }

        /// A key that appears twice in one object; `key` is named only for a store's own keys.
        func duplicate(_ key: String?, at offset: Int) -> JSONFileParseError {
            error("the key \(key.map { "\"\($0)\" " } ?? "")appears more than once in the same object", at: offset)
        }

        private func error(_ reason: String, at offset: Int) -> JSONFileParseError {
            JSONFileParseError(reason, at: offset, in: text)
        }
    }
}
