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
