import AnyDefaultsCore
import Foundation

/// How keys, values, batches and events travel between the suite and a child process: each as
/// one word, `b:` and the base64 of its bytes. Keys are their exact UTF-8 (no normalization on
/// the way), values the core's exact binary encoding, so what arrives is bit for bit what was sent.
enum ChildWire {
    static func token(_ bytes: some Collection<UInt8>) -> String { "b:" + Data(bytes).base64EncodedString() }

    static func bytes(_ token: Substring) throws(ChildFailure) -> [UInt8] {
        guard token.hasPrefix("b:"), let data = Data(base64Encoded: String(token.dropFirst(2))) else {
            throw ChildFailure(description: "a malformed word in the child protocol: \(token.prefix(40))")
        }
        return Array(data)
    }

    static func text(_ text: String) -> String { token(Array(text.utf8)) }

    static func text(from token: Substring) throws(ChildFailure) -> String {
        String(decoding: try bytes(token), as: UTF8.self)
    }

    static func value(_ value: DefaultsValue) -> String { token(BinaryValueCodec.encode(value)) }

    static func value(from token: Substring) throws(ChildFailure) -> DefaultsValue {
        let bytes = try bytes(token)
        do {
            return try bytes.withUnsafeBytes { buffer throws(BinaryCodecError) in try BinaryValueCodec.decode(buffer) }
        } catch {
            throw ChildFailure(description: "an undecodable value in the child protocol: \(error)")
        }
    }

    /// A batch: an array with, per change, `[key]` for a removal or `[key, value]` for a set.
    static func batch(_ changes: [DefaultsChange]) -> String {
        value(.array(changes.map { change in
            switch change {
            case .set(let key, let value): .array([.string(key), value])
            case .remove(let key): .array([.string(key)])
            }
        }))
    }

    static func batch(from token: Substring) throws(ChildFailure) -> [DefaultsChange] {
        guard case .array(let items) = try value(from: token) else { throw ChildFailure(description: "a batch is not an array") }
        var changes: [DefaultsChange] = []
        for item in items {
            switch item {
            case .array(let parts) where parts.count == 1:
                guard case .string(let key) = parts[0] else { throw ChildFailure(description: "a removal without a key") }
                changes.append(.remove(key))
            case .array(let parts) where parts.count == 2:
                guard case .string(let key) = parts[0] else { throw ChildFailure(description: "a set without a key") }
                changes.append(.set(key, parts[1]))
            default:
                throw ChildFailure(description: "a malformed change")
            }
        }
        return changes
    }

    /// Keys, in the order given (duplicates kept, so that a duplicate in `keys()` arrives).
    static func keys(_ keys: [String]) -> String { value(.array(keys.map { .string($0) })) }

    static func keys(from token: Substring) throws(ChildFailure) -> [String] {
        guard case .array(let items) = try value(from: token) else { throw ChildFailure(description: "keys are not an array") }
        return items.compactMap { if case .string(let key) = $0 { key } else { nil } }
    }

    /// Keys with their values, as pairs (so that no two spellings of a key merge on the way).
    static func entries(_ entries: [(String, DefaultsValue)]) -> String {
        value(.array(entries.map { .array([.string($0.0), $0.1]) }))
    }

    static func entries(from token: Substring) throws(ChildFailure) -> [(String, DefaultsValue)] {
        guard case .array(let items) = try value(from: token) else { throw ChildFailure(description: "entries are not an array") }
        return items.compactMap {
            guard case .array(let pair) = $0, pair.count == 2, case .string(let key) = pair[0] else { return nil }
            return (key, pair[1])
        }
    }

    /// Events: per event `[key, external, value]`, the value left out for a removal.
    static func events(_ events: [DefaultsChangeEvent]) -> String {
        value(.array(events.map { event in
            .array([.string(event.key), .bool(event.origin == .external)] + (event.newValue.map { [$0] } ?? []))
        }))
    }

    static func events(from token: Substring) throws(ChildFailure) -> [DefaultsChangeEvent] {
        guard case .array(let items) = try value(from: token) else { throw ChildFailure(description: "events are not an array") }
        return items.compactMap {
            guard case .array(let parts) = $0, parts.count >= 2, case .string(let key) = parts[0], case .bool(let external) = parts[1]
            else { return nil }
            return DefaultsChangeEvent(key: key, newValue: parts.count > 2 ? parts[2] : nil, origin: external ? .external : .local)
        }
    }

    /// The answer for a failed request: `error CODE DESCRIPTION`.
    static func errorAnswer(_ error: any Error) -> String {
        let code = (error as? DefaultsError).map { "\($0.code)" } ?? "\(type(of: error))"
        return "error \(text(code)) \(text("\(error)"))"
    }

    /// The code and description of an `error` answer, for messages.
    static func errorText(_ answer: [Substring]) -> String {
        guard answer.count >= 3, let code = try? text(from: answer[1]), let description = try? text(from: answer[2]) else {
            return answer.joined(separator: " ")
        }
        return "\(code): \(description)"
    }

    /// The `DefaultsError.Code` name of an `error` answer.
    static func errorCode(_ answer: [Substring]) -> String? {
        guard answer.first == "error", answer.count >= 2 else { return nil }
        return try? text(from: answer[1])
    }
}
