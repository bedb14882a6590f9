import Foundation

/// Encodes any `Encodable` value into a ``DefaultsValue`` that every backend can store.
///
/// With the default ``DefaultsCodingStrategy/structured`` strategy the result is readable in any
/// backend: structs and classes become dictionaries (a `nil` property is an absent entry), arrays
/// become arrays, enums with associated values take Swift's synthesized shape
/// (`["case": ["label": value]]`), `Date` becomes `.date`, `Data` `.data`, `URL` and `UUID`
/// `.string`, every integer width `.int` and `Double`/`Float` `.double`.
///
/// ```swift
/// struct Window: Codable { var title: String; var frame: [Double] }
/// let value = try DefaultsEncoder().encode(Window(title: "Main", frame: [0, 0, 800, 600]))
/// // .dictionary(["title": .string("Main"), "frame": .array([.double(0), ...])])
/// try store.setValue(value, forKey: "window")
/// ```
///
/// Encoding fails with ``DefaultsError/Code-swift.struct/encodingFailed`` (naming the key when
/// given and the path inside the value, never the value) for what a store cannot hold: an
/// unsigned integer above `Int64.max` (it is not wrapped), `nil` inside an array, nesting deeper
/// than ``DefaultsValue/maximumNestingDepth``, or a top-level `nil`.
public struct DefaultsEncoder: Sendable {
    /// How values are represented; ``DefaultsCodingStrategy/structured`` by default.
    public var strategy: DefaultsCodingStrategy
    /// Context handed to `encode(to:)` as the encoder's `userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    static let backend = "DefaultsEncoder"

    /// Creates an encoder.
    public init(strategy: DefaultsCodingStrategy = .structured, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.strategy = strategy
        self.userInfo = userInfo
    }

    /// Encodes `value`.
    ///
    /// - Parameter key: the defaults key the value is meant for, named in errors.
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed``.
    public func encode<T: Encodable>(_ value: T, forKey key: String? = nil) throws(DefaultsError) -> DefaultsValue {
        guard let encoded = try encodeIfPresent(value, forKey: key) else {
            throw DefaultsError(.encodingFailed, "A top-level nil has no stored form; remove the key instead.",
                                backend: Self.backend, key: key)
        }
        return encoded
    }

    /// Encodes `value`, or returns `nil` when it is `nil` (there is nothing to store).
    public func encodeIfPresent<T: Encodable>(_ value: T, forKey key: String? = nil) throws(DefaultsError) -> DefaultsValue? {
        do {
            switch strategy {
            case .structured:
                let encoder = ValueEncoder(node: EncodingNode(), codingPath: [], userInfo: userInfo, level: 0)
                return try EncodedTree.finish(encoder.slot(for: value, at: nil), path: [])
            case .jsonData:
                if isAbsent(value) { return nil }
                return .data(try jsonEncoder().encode(value))
            case .jsonString:
                if isAbsent(value) { return nil }
                return .string(String(decoding: try jsonEncoder().encode(value), as: UTF8.self))
            }
        } catch {
            throw Self.convert(error, type: T.self, key: key)
        }
    }

    private func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        // Sorted keys make equal values encode to equal bytes, so a cache can skip rewriting them.
        encoder.outputFormatting = [.sortedKeys]
        encoder.userInfo = userInfo
        return encoder
    }

    /// A ``DefaultsError`` for any failure while encoding. The value's own `EncodingError`s are
    /// summarized, not kept as the cause: they carry the value, which may be a secret.
    static func convert(_ error: any Error, type: Any.Type, key: String?) -> DefaultsError {
        switch error {
        case let error as DefaultsError:
            return error
        case let failure as EncodingFailure:
            return DefaultsError(
                .encodingFailed,
                "Cannot encode \(type) at \(CodingPath.describe(failure.codingPath, key: key)): \(failure.message)",
                backend: backend, key: key)
        case let error as EncodingError:
            let context: EncodingError.Context? = if case .invalidValue(_, let context) = error { context } else { nil }
            let place = CodingPath.describe(context?.codingPath ?? [], key: key)
            return DefaultsError(
                .encodingFailed, "Cannot encode \(type) at \(place): \(context?.debugDescription ?? "invalid value").",
                backend: backend, key: key)
        default:
            return DefaultsError(.encodingFailed, "Cannot encode \(type).", backend: backend, key: key, cause: error)
        }
    }
}
