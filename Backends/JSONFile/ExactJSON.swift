import AnyDefaultsCore
import Foundation

/// The exact JSON encoding of the JSON file backend, for one value or a whole store: plain JSON
/// wherever JSON is exact (strings, integers, booleans, arrays, objects; doubles always with a
/// fraction or exponent), and small tagged objects for the rest (`{"$date": …}`, `{"$data": …}`,
/// `{"$double": "nan"}`), so that every ``DefaultsValue`` reads back bit for bit.
/// Docs/Backends.md ("JSON file") spells out the encoding.
///
/// ```swift
/// ExactJSON.string(from: .double(1))                  // "1.0"
/// try ExactJSON.value(from: #"{"a": [1, 2.5]}"#)      // .dictionary(["a": .array([.int(1), .double(2.5)])])
/// ```
public enum ExactJSON {
    static let backend = "JSON"

    /// The text of `value`: one line for a scalar, pretty-printed for a container; no trailing
    /// newline.
    public static func string(from value: DefaultsValue) -> String {
        var bytes = JSONFileEncoder.encode(value: value)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads one value: any JSON value but `null`, with the tagged forms.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidValue`` with the line and column of the
    ///   problem.
    public static func value(from text: String) throws(DefaultsError) -> DefaultsValue {
        do {
            return try JSONFileDecoder.decodeValue(Array(text.utf8))
        } catch {
            throw DefaultsError(.invalidValue, "Not a JSON value: \(error).", backend: backend, cause: error)
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

    /// The text of a whole store, exactly as the JSON file backend writes its file.
    public static func data(from store: [String: DefaultsValue]) -> Data {
        Data(JSONFileEncoder.encode(store))
    }

    /// Reads a whole store from the text of a JSON settings file.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/corrupted`` with the line and column of the
    ///   problem.
    public static func store(from data: Data) throws(DefaultsError) -> [String: DefaultsValue] {
        do {
            return try JSONFileDecoder.decode(Array(data))
        } catch {
            throw DefaultsError(.corrupted, "Not a JSON settings document: \(error).", backend: backend, cause: error)
        }
    }
}
