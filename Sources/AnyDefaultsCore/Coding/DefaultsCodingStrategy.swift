/// How ``DefaultsEncoder`` and ``DefaultsDecoder`` represent a `Codable` value in a store.
///
/// ```swift
/// // Readable in every backend: a dictionary with one entry per property.
/// let tree = try DefaultsEncoder().encode(settings)
/// // Compatible with libraries that keep Codable values as JSON data.
/// let blob = try DefaultsEncoder(strategy: .jsonData).encode(settings)   // .data(...)
/// ```
public enum DefaultsCodingStrategy: Sendable, Hashable {
    /// A tree of ``DefaultsValue``s: structs and classes become dictionaries, arrays become arrays,
    /// `Date` becomes `.date`, `Data` `.data`, `URL` and `UUID` `.string`. The default.
    case structured
    /// JSON text in a `.data` value, as libraries that store Codable values in `UserDefaults`
    /// commonly do. Reading also accepts JSON in a `.string`.
    case jsonData
    /// JSON text in a `.string` value. Reading also accepts JSON in a `.data`.
    case jsonString
}
