import Foundation

/// Turns the contents of a store into the text of a JSON settings file: keys sorted by their
/// UTF-8 bytes, two-space indentation, plain JSON wherever it is exact, tagged forms
/// (``JSONFileTag``) elsewhere. The same contents always give the same bytes.
///
/// Works with an explicit stack, so value depth costs heap, not thread stack.
package enum JSONFileEncoder {
    package static func encode(_ values: [String: DefaultsValue], compact: Bool = false) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + values.count * 32, compact: compact)
        guard !values.isEmpty else {
            writer.raw("{}")
            writer.finish()
            return writer.bytes
        }
        writer.open(UInt8(ascii: "{"))
        var stack = [Frame(entries: sorted(values).map { ($0.key, $0.value) }, closer: UInt8(ascii: "}"))]
        drain(&stack, into: &writer)
        writer.finish()
        return writer.bytes
    }

    /// The text of one value, laid out as in a file (a scalar on one line, a container
    /// pretty-printed) or all on one line with `compact`; a value JSON cannot carry exactly in its
    /// tagged form (also at the top).
    static func encode(value: DefaultsValue, compact: Bool = false) -> [UInt8] {
        var writer = JSONWriter(compact: compact)
        var stack: [Frame] = []
        write(value, into: &writer, stack: &stack)
        drain(&stack, into: &writer)
        writer.finish()
        return writer.bytes
    }

    /// Writes the elements of every open container, innermost first, and closes them.
    private static func drain(_ stack: inout [Frame], into writer: inout JSONWriter) {
        while !stack.isEmpty {
            let top = stack.count - 1
            let next = stack[top].next
            guard next < stack[top].entries.count else {
                writer.close(stack.removeLast().closer)
                continue
            }
            stack[top].next += 1
            let (key, value) = stack[top].entries[next]
            writer.startElement(isFirst: next == 0)
            if let key { writer.key(key) }
            write(value, into: &writer, stack: &stack)
        }
    }

    /// An open array or object and the elements still to write.
    private struct Frame {
        var entries: [(key: String?, value: DefaultsValue)]
        var closer: UInt8
        var next = 0
    }

    /// Writes a scalar, or opens a container and pushes its elements.
    private static func write(_ value: DefaultsValue, into writer: inout JSONWriter, stack: inout [Frame]) {
        switch value {
        case .bool(let value):
            writer.raw(value ? "true" : "false")
        case .int(let value):
            writer.raw(String(value))
        case .double(let value):
            if value.isFinite {
                writer.raw(numberText(value))
            } else {
                writeTagged(.double, into: &writer) { $0.string(JSONFileTag.nonFiniteName(value)) }
            }
        case .string(let value):
            writer.string(value)
        case .data(let value):
            // Base64 needs no escaping.
            writeTagged(.data, into: &writer) { $0.raw("\"" + value.base64EncodedString() + "\"") }
        case .date(let value):
            let interval = value.timeIntervalSinceReferenceDate
            writeTagged(.date, into: &writer) { writer in
                if let text = ExactTimestamp.string(for: interval) {
                    writer.string(text)
                } else if interval.isFinite {
                    writer.raw(numberText(interval))
                } else {
                    writer.string(JSONFileTag.nonFiniteName(interval))
                }
            }
        case .array(let items):
            guard !items.isEmpty else { return writer.raw("[]") }
            writer.open(UInt8(ascii: "["))
            stack.append(Frame(entries: items.map { (nil, $0) }, closer: UInt8(ascii: "]")))
        case .dictionary(let dictionary):
            guard !dictionary.isEmpty else { return writer.raw("{}") }
            let members = sorted(dictionary)
            if JSONFileTag.needsWrapping(members) {
                // {"$dict": {...}}: the wrapper is a frame with nothing left but its closing brace.
                writer.open(UInt8(ascii: "{"))
                writer.startElement(isFirst: true)
                writer.key(JSONFileTag.dictionary.rawValue)
                stack.append(Frame(entries: [], closer: UInt8(ascii: "}")))
            }
            writer.open(UInt8(ascii: "{"))
            stack.append(Frame(entries: members.map { ($0.key, $0.value) }, closer: UInt8(ascii: "}")))
        }
    }

    /// `{"$tag": …}` on one line.
    private static func writeTagged(_ tag: JSONFileTag, into writer: inout JSONWriter, body: (inout JSONWriter) -> Void) {
        writer.raw("{")
        writer.key(tag.rawValue)
        body(&writer)
        writer.raw("}")
    }

    /// The shortest text that reads back as exactly `value` (finite), always with a fraction or
    /// an exponent so that it never reads back as an integer: `1.0`, `-0.0`, `1e+16`.
    static func numberText(_ value: Double) -> String {
        let text = value.description
        return text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) ? text : text + ".0"
    }

    /// Members in file order: by the UTF-8 bytes of their keys, which is stable across platforms
    /// and what a reader scanning the file expects.
    private static func sorted(_ dictionary: [String: DefaultsValue]) -> [(key: String, value: DefaultsValue)] {
        // Sorting the keys alone and looking the values up is cheaper than sorting the pairs,
        // whose every move copies a value.
        dictionary.keys.sorted { $0.utf8Precedes($1) }.compactMap { key in dictionary[key].map { (key, $0) } }
    }
}
