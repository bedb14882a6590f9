import Foundation

/// Decodes any `Decodable` type from a ``DefaultsValue``, the inverse of ``DefaultsEncoder``.
///
/// ```swift
/// struct Window: Codable { var title: String; var frame: [Double] }
/// if let stored = try store.value(forKey: "window") {
///     let window = try DefaultsDecoder().decode(Window.self, from: stored, forKey: "window")
/// }
/// // Values that another library stored as JSON data:
/// let legacy = try DefaultsDecoder(strategy: .jsonData).decode(Window.self, from: blob)
/// ```
///
/// Numbers widen only where nothing is lost: an integer type reads a `.double` holding a whole
/// number in range, `Double` reads `.int`, `Bool` reads `.int(0)` and `.int(1)`. An integer that
/// does not fit the requested width is an error, never wrapped. A missing key decodes as `nil`
/// for an optional property.
///
/// Every failure is a ``DefaultsError`` with code ``DefaultsError/Code-swift.struct/decodingFailed``
/// whose message names the key and the path inside the value, as in
/// `settings.window.frame[2]`, and what was expected; the underlying `DecodingError` is its
/// ``DefaultsError/cause``. Neither contains the stored value. Input of any shape or depth fails
/// cleanly: nesting deeper than ``DefaultsValue/maximumNestingDepth`` is rejected.
public struct DefaultsDecoder: Sendable {
    /// How values are represented; ``DefaultsCodingStrategy/structured`` by default. Both JSON
    /// strategies read JSON from `.data` and from `.string` values alike.
    public var strategy: DefaultsCodingStrategy
    /// Context handed to `init(from:)` as the decoder's `userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a decoder.
    public init(strategy: DefaultsCodingStrategy = .structured, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.strategy = strategy
        self.userInfo = userInfo
    }

    /// Decodes a `T` from `value`.
    ///
    /// - Parameter key: the defaults key the value was read from, named in errors.
    /// - Throws: ``DefaultsError/Code-swift.struct/decodingFailed``.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from value: DefaultsValue, forKey key: String? = nil) throws(DefaultsError) -> T {
        do {
            switch strategy {
            case .structured:
                let decoder = ValueDecoder(value: value, codingPath: [], userInfo: userInfo, level: 0)
                return try decoder.decode(T.self, from: value, at: nil)
            case .jsonData, .jsonString:
                let json: Data
                switch value {
                case .data(let data): json = data
                case .string(let string): json = Data(string.utf8)
                default:
                    throw DecodingError.typeMismatch(Data.self, .init(
                        codingPath: [], debugDescription: "Expected JSON in data or a string, found \(value.typeName)."))
                }
                let decoder = JSONDecoder()
                decoder.userInfo = userInfo
                do {
                    return try decoder.decode(T.self, from: json)
                } catch let error as DecodingError {
                    throw Self.withoutStoredContent(error)
                }
            }
        } catch {
            throw Self.convert(error, type: T.self, key: key)
        }
    }

    /// A ``DefaultsError`` for any failure while decoding, naming the key and the coding path.
    static func convert(_ error: any Error, type: Any.Type, key: String?) -> DefaultsError {
        switch error {
        case let error as DefaultsError:
            return error
        case let error as DecodingError:
            let (path, reason) = describe(error)
            return DefaultsError(
                .decodingFailed, "Cannot decode \(type) at \(CodingPath.describe(path, key: key)): \(reason)",
                backend: backend, key: key, cause: error)
        default:
            return DefaultsError(.decodingFailed, "Cannot decode \(type): the type's decoder failed.",
                                 backend: backend, key: key, cause: error)
        }
    }

    private static func describe(_ error: DecodingError) -> (path: [any CodingKey], reason: String) {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return (context.codingPath, context.debugDescription)
        case .keyNotFound(let key, let context):
            return (context.codingPath + [key], "no value for this key.")
        @unknown default:
            return ([], "the value does not match the type.")
        }
    }

    /// JSONDecoder's messages and underlying errors may quote the data (a number, a character);
    /// keep the kind of failure and the path, and replace the text.
    private static func withoutStoredContent(_ error: DecodingError) -> DecodingError {
        switch error {
        case .typeMismatch(let type, let context):
            return .typeMismatch(type, .init(codingPath: context.codingPath, debugDescription: "Expected \(type) in the JSON."))
        case .valueNotFound(let type, let context):
            return .valueNotFound(type, .init(codingPath: context.codingPath, debugDescription: "Expected \(type), found null in the JSON."))
        case .keyNotFound(let key, let context):
            return .keyNotFound(key, .init(codingPath: context.codingPath, debugDescription: "No value for key \"\(key.stringValue)\" in the JSON."))
        case .dataCorrupted(let context):
            return .dataCorrupted(.init(codingPath: context.codingPath, debugDescription: "The JSON is not valid or does not fit the type."))
        @unknown default:
            return .dataCorrupted(.init(codingPath: [], debugDescription: "The JSON does not match the type."))
        }
    }
}

extension DefaultsDecoder {
    /// The name its errors give as their backend.
    static let backend = "DefaultsDecoder"
}
