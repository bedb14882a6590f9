import Foundation

/// The exact JSON encoding of a ``DefaultsValue`` or of a whole store: the format of the JSON
/// file backend, of the command-line tool's `export` and `read`, and a stable format for provider
/// authors who store values as text.
///
/// Plain JSON wherever JSON is exact (strings, integers, booleans, arrays, objects; doubles always
/// with a fraction or an exponent, so that `1.0` never reads back as the integer `1`), and small
/// tagged objects for the rest: `{"$date": "2024-05-01T12:00:00Z"}`, `{"$data": "AAEC"}`,
/// `{"$double": "nan"}`, and `{"$dict": {…}}` around a dictionary whose only key starts with `$`.
/// Every value reads back bit for bit. The format is stable: what this version writes, every later
/// version reads as the same value. Docs/Backends.md ("JSON file") spells it out.
///
/// ```swift
/// ExactJSON.string(from: .double(1))                                  // "1.0"
/// ExactJSON.string(from: ["a": [1, 2.5]], layout: .oneLine)           // {"a":[1,2.5]}
/// try ExactJSON.value(from: #"{"a": [1, 2.5]}"#)      // .dictionary(["a": .array([.int(1), .double(2.5)])])
/// ```
///
/// The same mapping makes ``DefaultsValue`` `Codable` (see `DefaultsValue+Codable.swift`).
public enum ExactJSON {
    static let backend = "JSON"

    /// How the text is laid out. Both read back the same; neither changes a value.
    public enum Layout: Sendable, Hashable {
        /// Two-space indentation, one array element or object member per line, keys sorted by
        /// their UTF-8 bytes: the layout of a JSON settings file. A scalar is one line.
        case pretty
        /// Everything on one line, without whitespace between tokens (keys still sorted): for
        /// logs, line-oriented output and network messages. JSON strings never hold a raw newline,
        /// so the text never holds one.
        case oneLine
    }

    /// The text of `value` in the ``Layout/pretty`` layout, without a trailing newline.
    public static func string(from value: DefaultsValue) -> String {
        string(from: value, layout: .pretty)
    }

    /// The text of `value`, without a trailing newline.
    public static func string(from value: DefaultsValue, layout: Layout) -> String {
        var bytes = JSONFileEncoder.encode(value: value, compact: layout == .oneLine)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads one value: any JSON value but `null`, with the tagged forms, in either layout (any
    /// whitespace is accepted).
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidValue`` with the line and column of the
    ///   problem (the cause is a ``JSONFileParseError``).
    public static func value(from text: String) throws(DefaultsError) -> DefaultsValue {
        do {
            return try JSONFileDecoder.decodeValue(Array(text.utf8))
        } catch {
            throw DefaultsError(.invalidValue, "Not a JSON value: \(error).", backend: backend, cause: error)
        }
    }

    /// The text of a whole store in the ``Layout/pretty`` layout: byte for byte what the JSON file
    /// backend writes.
    public static func data(from store: [String: DefaultsValue]) -> Data {
        data(from: store, layout: .pretty)
    }

    /// The text of a whole store (a JSON object mapping each key to its value), ending with a
    /// newline.
    public static func data(from store: [String: DefaultsValue], layout: Layout) -> Data {
        Data(JSONFileEncoder.encode(store, compact: layout == .oneLine))
    }

    /// Reads a whole store from the text of a JSON settings file (either layout).
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/corrupted`` with the line and column of the
    ///   problem (the cause is a ``JSONFileParseError``).
    public static func store(from data: Data) throws(DefaultsError) -> [String: DefaultsValue] {
        do {
            return try JSONFileDecoder.decode(Array(data))
        } catch {
            throw DefaultsError(.corrupted, "Not a JSON settings document: \(error).", backend: backend, cause: error)
        }
    }

    /// Why a decimal number cannot be read as a double.
    public struct NumberProblem: Error, Sendable {
        /// A phrase for people, saying what is accepted instead.
        public var reason: String
    }

    /// The double a decimal number (JSON's, or any that Swift's `Double(_:)` reads) stands for;
    /// refused when no double is that number: beyond Double's range (`1e400`, which would read as
    /// an infinity) or so small that it would read as zero (`1e-400`, not written as a zero).
    /// Every number of every JSON input (files, imports, `write --type json`) and of
    /// `write --type double` goes through here.
    ///
    /// ```swift
    /// ExactJSON.double(fromLiteral: "2.5")      // .success(2.5)
    /// ExactJSON.double(fromLiteral: "1e400")    // .failure: beyond the range of a double
    /// ```
    public static func double(fromLiteral literal: String) -> Result<Double, NumberProblem> {
        guard let value = Double(literal) else { return .failure(NumberProblem(reason: "not a number Swift can read")) }
        guard value.isFinite else {
            return .failure(NumberProblem(reason: #"the number is beyond the range of a double (about ±1.8e308); write {"$double": "inf"} or "-inf" for an infinity"#))
        }
        if value == 0 {
            let mantissa = literal.prefix { $0 != "e" && $0 != "E" && $0 != "p" && $0 != "P" }
            let digits = mantissa.hasPrefix("0x") || mantissa.hasPrefix("-0x") || mantissa.hasPrefix("+0x")
                ? mantissa.dropFirst(mantissa.first == "0" ? 2 : 3) : mantissa[...]
            if digits.contains(where: { $0.isHexDigit && $0 != "0" }) {
                return .failure(NumberProblem(reason: "the number is too small for a double (below about 4.9e-324) and would read as 0; write 0.0 for zero"))
            }
        }
        return .success(value)
    }
}
