/// Writes JSON text into bytes: pretty-printed (two-space indentation, one element per line, a
/// space after each colon), or on one line without any layout whitespace.
///
/// The writer knows layout and string escaping only; what to write, and in which order, is the
/// caller's business, so callers can write without recursion.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var depth = 0
    /// Whether to write without layout whitespace, on one line.
    private let compact: Bool

    init(capacity: Int = 0, compact: Bool = false) {
        bytes.reserveCapacity(capacity)
        self.compact = compact
    }

    /// Writes `[` or `{`; the elements that follow are indented one level more.
    mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        depth += 1
    }

    /// Writes `]` or `}` on a line of its own, after at least one element.
    mutating func close(_ bracket: UInt8) {
        depth -= 1
        newline()
        bytes.append(bracket)
    }

    /// Starts an element of the innermost open array or object on a new line.
    mutating func startElement(isFirst: Bool) {
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
        newline()
    }

    /// Writes `"name": ` (`"name":` on one line).
    mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        if !compact { bytes.append(UInt8(ascii: " ")) }
    }

    /// Writes text that is already valid JSON.
    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes a string literal. Non-ASCII text is written as UTF-8, not as `\u` escapes, so that
    /// the file stays readable; quotes, backslashes and control characters are escaped.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Over the contiguous bytes: the generic UTF8View walk was a quarter of encoding a file.
        var text = text
        text.withUTF8 { utf8 in
            if utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
            } else {
                for byte in utf8 { escape(byte) }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Ends the document with a newline, as text files do.
    mutating func finish() {
        bytes.append(UInt8(ascii: "\n"))
    }

    private mutating func escape(_ byte: UInt8) {
        let short: UInt8? = switch byte {
        case UInt8(ascii: "\""): UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): UInt8(ascii: "\\")
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        case 0x08: UInt8(ascii: "b")
        case 0x0C: UInt8(ascii: "f")
        default: nil
        }
        if let short {
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(short)
        } else if byte < 0x20 {
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        } else {
            bytes.append(byte)
        }
    }

    private mutating func newline() {
        guard !compact else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }
}
