/// A strict JSON parser (RFC 8259) for settings files.
///
/// Built to take any bytes without crashing: every index is checked before use, containers are
/// tracked on an explicit stack instead of by recursion, nesting is limited, and strings are
/// validated as UTF-8. Errors carry the line and column of the problem. Numbers are kept as
/// written, so the layer above can tell `1` from `1.0` and read `Int64` extremes exactly.
///
/// Accepted beyond the grammar: a UTF-8 byte order mark at the start. Not accepted: comments,
/// trailing commas, `NaN`/`Infinity`, single quotes, leading zeros, lone UTF-16 surrogates.
struct JSONReader {
    private let text: [UInt8]
    private let maximumDepth: Int
    private var index = 0

    /// Parses `text`, which must hold exactly one JSON value (surrounded by whitespace at most),
    /// nesting arrays and objects no deeper than `maximumDepth`.
    static func parse(_ text: [UInt8], maximumDepth: Int) throws(JSONFileParseError) -> JSONNode {
        var reader = JSONReader(text: text, maximumDepth: maximumDepth)
        return try reader.parseDocument()
    }

    private init(text: [UInt8], maximumDepth: Int) {
        self.text = text
        self.maximumDepth = maximumDepth
    }

    /// An array or object whose closing bracket has not been reached yet.
    private struct Frame {
        var isObject: Bool
        var offset: Int
        var items: [JSONNode] = []
        var members: [JSONMember] = []
        /// The key of the member whose value is being read.
        var key = ""
        var keyOffset = 0

        var closer: UInt8 { isObject ? UInt8(ascii: "}") : UInt8(ascii: "]") }
        var name: String { isObject ? "object" : "array" }
    }

    private mutating func parseDocument() throws(JSONFileParseError) -> JSONNode {
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        var stack: [Frame] = []
        var afterComma = false
        while true {
            // Read one value, or open a container and go on with its first element.
            skipWhitespace()
            guard let byte = peek() else {
                if let open = stack.last { throw unclosed(open) }
                throw error("expected a JSON value, but the file is empty", at: index)
            }
            let start = index
            var node: JSONNode
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard stack.count < maximumDepth else {
                    throw error("arrays and objects nest deeper than \(maximumDepth) levels", at: start)
                }
                var frame = Frame(isObject: byte == UInt8(ascii: "{"), offset: start)
                index += 1
                skipWhitespace()
                if peek() == frame.closer {
                    index += 1
                    node = JSONNode(value: frame.isObject ? .object([]) : .array([]), offset: start)
                } else {
                    if frame.isObject { try readKey(into: &frame, afterComma: false) }
                    stack.append(frame)
                    afterComma = false
                    continue
                }
            case UInt8(ascii: "\""):
                node = JSONNode(value: .string(try readString()), offset: start)
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                node = JSONNode(value: .bool(true), offset: start)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                node = JSONNode(value: .bool(false), offset: start)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                node = JSONNode(value: .null, offset: start)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                node = try readNumber()
            case UInt8(ascii: "]") where afterComma:
                throw error("a comma must not follow the last element of an array", at: start)
            default:
                throw error("expected a value (an object, array, string, number, true, false or null)", at: start)
            }

            // Add the value to its container; close every container that ends here.
            while true {
                guard !stack.isEmpty else {
                    skipWhitespace()
                    if index < text.count {
                        throw error("unexpected text after the end of the top-level value", at: index)
                    }
                    return node
                }
                let top = stack.count - 1
                if stack[top].isObject {
                    stack[top].members.append(JSONMember(key: stack[top].key, keyOffset: stack[top].keyOffset, node: node))
                } else {
                    stack[top].items.append(node)
                }
                skipWhitespace()
                guard let next = peek() else { throw unclosed(stack[top]) }
                if next == UInt8(ascii: ",") {
                    index += 1
                    afterComma = !stack[top].isObject
                    if stack[top].isObject { try readKey(into: &stack[top], afterComma: true) }
                    break
                }
                guard next == stack[top].closer else {
                    throw error("expected ',' or '\(Character(Unicode.Scalar(stack[top].closer)))'", at: index)
                }
                index += 1
                let frame = stack.removeLast()
                node = JSONNode(value: frame.isObject ? .object(frame.members) : .array(frame.items), offset: frame.offset)
            }
        }
    }

    /// Reads `"key":` of an object member into `frame`.
    private mutating func readKey(into frame: inout Frame, afterComma: Bool) throws(JSONFileParseError) {
        skipWhitespace()
        guard let byte = peek() else { throw unclosed(frame) }
        guard byte == UInt8(ascii: "\"") else {
            if byte == UInt8(ascii: "}") && afterComma {
                throw error("a comma must not follow the last member of an object", at: index)
            }
            throw error("expected a member name in double quotes", at: index)
        }
        frame.keyOffset = index
        frame.key = try readString()
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else {
            if index >= text.count { throw unclosed(frame) }
            throw error("expected ':' after the member name", at: index)
        }
        index += 1
    }

    // MARK: Tokens

    private mutating func readString() throws(JSONFileParseError) -> String {
        let quote = index
        index += 1
        let start = index
        // Fast path: no escapes, so the string is the bytes between the quotes.
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: text[start..<(index - 1)], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw controlCharacter(at: index) }
            index += byte < 0x80 ? 1 : try utf8SequenceLength(at: index)
        }
        var buffer = Array(text[start..<index])
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try readEscape(into: &buffer)
            case ..<0x20:
                throw controlCharacter(at: index)
            case ..<0x80:
                buffer.append(byte)
                index += 1
            default:
                let length = try utf8SequenceLength(at: index)
                buffer.append(contentsOf: text[index..<(index + length)])
                index += length
            }
        }
        throw error("the file ends inside the string that starts here", at: quote)
    }

    /// Reads the escape sequence at `index` (a backslash) and appends what it stands for.
    private mutating func readEscape(into buffer: inout [UInt8]) throws(JSONFileParseError) {
        let start = index
        guard index + 1 < text.count else { throw error("the file ends inside an escape sequence", at: start) }
        let letter = text[index + 1]
        index += 2
        let simple: UInt8? = switch letter {
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        case UInt8(ascii: "/"): 0x2F
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
        if let simple {
            buffer.append(simple)
            return
        }
        guard letter == UInt8(ascii: "u") else {
            throw error(#"unknown escape sequence; the escapes are \" \\ \/ \b \f \n \r \t and \uXXXX"#, at: start)
        }
        guard var value = hex4(at: index) else {
            throw error(#"\u must be followed by four hexadecimal digits"#, at: start)
        }
        index += 4
        if (0xD800...0xDBFF).contains(value) {
            // A high surrogate must be followed by an escaped low surrogate.
            guard index + 1 < text.count, text[index] == UInt8(ascii: "\\"), text[index + 1] == UInt8(ascii: "u"),
                let low = hex4(at: index + 2), (0xDC00...0xDFFF).contains(low)
            else { throw error(#"unpaired UTF-16 surrogate in a \u escape"#, at: start) }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            index += 6
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw error(#"unpaired UTF-16 surrogate in a \u escape"#, at: start)
        }
        UTF8.encode(scalar) { buffer.append($0) }
    }

    private func hex4(at position: Int) -> UInt32? {
        guard position >= 0, position + 4 <= text.count else { return nil }
        var value: UInt32 = 0
        for byte in text[position..<(position + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence at `position` (Unicode table 3-7: no
    /// overlong forms, no surrogates, nothing above U+10FFFF).
    private func utf8SequenceLength(at position: Int) throws(JSONFileParseError) -> Int {
        let lead = text[position]
        let length: Int
        let second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: throw error("invalid UTF-8", at: position)
        }
        guard position + length <= text.count, second.contains(text[position + 1]) else {
            throw error("invalid UTF-8", at: position)
        }
        for offset in 2..<length where text[position + offset] & 0xC0 != 0x80 {
            throw error("invalid UTF-8", at: position)
        }
        return length
    }

    private mutating func readNumber() throws(JSONFileParseError) -> JSONNode {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a digit", at: index) }
        index += 1
        if first == UInt8(ascii: "0") {
            if let next = peek(), isDigit(next) { throw error("a number must not have leading zeros", at: start) }
        } else {
            skipDigits()
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit after the decimal point", at: index) }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit in the exponent", at: index) }
            skipDigits()
        }
        let literal = String(decoding: text[start..<index], as: UTF8.self)
        return JSONNode(value: .number(literal, isInteger: isInteger), offset: start)
    }

    private mutating func expectLiteral(_ word: StaticString) throws(JSONFileParseError) {
        let count = word.utf8CodeUnitCount
        let matches = index + count <= text.count && word.withUTF8Buffer { expected in
            text[index..<(index + count)].elementsEqual(expected)
        }
        guard matches else {
            throw error("expected a value (an object, array, string, number, true, false or null)", at: index)
        }
        index += count
    }

    // MARK: Helpers

    private func peek() -> UInt8? { index < text.count ? text[index] : nil }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
        {
            index += 1
        }
    }

    private func error(_ reason: String, at offset: Int) -> JSONFileParseError {
        JSONFileParseError(reason, at: offset, in: text)
    }

    private func controlCharacter(at offset: Int) -> JSONFileParseError {
        error(#"a control character inside a string must be escaped (\n, \t, \u0001 ...)"#, at: offset)
    }

    /// The error for a file that ends inside `frame`: it points at where the frame opened.
    private func unclosed(_ frame: Frame) -> JSONFileParseError {
        let opening = error("", at: frame.offset)
        return error(
            "the file ends before the \(frame.name) opened at line \(opening.line), column \(opening.column) is closed",
            at: text.count)
    }
}
