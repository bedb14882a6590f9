import AnyDefaults

/// A value's exact JSON (``ExactJSON``) on one line, for line-oriented output such as `watch`.
enum CompactJSON {
    /// `ExactJSON.string(from:)` without the layout whitespace of containers. Whitespace inside
    /// strings is kept; JSON strings never hold a raw newline, so the result is one line.
    static func string(from value: DefaultsValue) -> String {
        switch value {
        case .array, .dictionary: break
        default: return ExactJSON.string(from: value)
        }
        var compact: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in ExactJSON.string(from: value).utf8 {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                continue
            }
            compact.append(byte)
        }
        return String(decoding: compact, as: UTF8.self)
    }
}
