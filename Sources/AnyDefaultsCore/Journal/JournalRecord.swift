/// The payload of one journal record: the operations of one acknowledged write, in order.
///
/// Each operation is a tag byte, then for `set` a length-prefixed UTF-8 key and the value in
/// ``BinaryValueCodec``'s encoding, for `remove` the key alone, for `clear` nothing. The record's
/// framing and checksum are ``JournalFile``'s.
package enum JournalRecord {
    package enum Operation: Sendable, Equatable {
        case set(String, DefaultsValue)
        case remove(String)
        /// Every key removed (`removeAll()`).
        case clear
    }

    private enum Tag: UInt8 {
        case set = 1, remove, clear
    }

    package static func appendSet(_ key: String, _ value: DefaultsValue, to bytes: inout [UInt8]) {
        bytes.append(Tag.set.rawValue)
        bytes.appendLengthPrefixed(key.utf8)
        BinaryValueCodec.append(value, to: &bytes)
    }

    package static func appendRemove(_ key: String, to bytes: inout [UInt8]) {
        bytes.append(Tag.remove.rawValue)
        bytes.appendLengthPrefixed(key.utf8)
    }

    package static func appendClear(to bytes: inout [UInt8]) {
        bytes.append(Tag.clear.rawValue)
    }

    /// Appends `change` as a `set` or a `remove`.
    package static func append(_ change: DefaultsChange, to bytes: inout [UInt8]) {
        if let value = change.value {
            appendSet(change.key, value, to: &bytes)
        } else {
            appendRemove(change.key, to: &bytes)
        }
    }

    /// The operations of a payload; bytes that are not a whole payload are an error.
    package static func operations(in payload: UnsafeRawBufferPointer) throws(BinaryCodecError) -> [Operation] {
        var reader = BinaryByteReader(payload)
        var operations: [Operation] = []
        while !reader.isAtEnd {
            let tagOffset = reader.offset
            switch Tag(rawValue: try reader.readByte()) {
            case .set:
                let key = try reader.readString()
                operations.append(.set(key, try BinaryValueCodec.decodeValue(&reader)))
            case .remove:
                operations.append(.remove(try reader.readString()))
            case .clear:
                operations.append(.clear)
            case nil:
                throw BinaryCodecError(.malformed, "A journal record holds an unknown operation.", at: tagOffset)
            }
        }
        return operations
    }
}
