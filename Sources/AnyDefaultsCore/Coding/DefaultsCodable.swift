/// Opts a `Codable` type into the typed bridge: it is stored through ``DefaultsEncoder`` and
/// read through ``DefaultsDecoder``, as a structured value readable in every backend.
///
/// ```swift
/// struct Layout: Codable, DefaultsCodable {
///     var columns: Int
///     var sidebar: Bool
/// }
///
/// extension DefaultsKeys {
///     static let layout = DefaultsKey<Layout>("layout", default: Layout(columns: 2, sidebar: true))
/// }
/// defaults[.layout].columns += 1
/// ```
///
/// To share values with a library that keeps Codable values as JSON data, choose the strategy:
///
/// ```swift
/// struct Profile: Codable, DefaultsCodable {
///     static var defaultsCodingStrategy: DefaultsCodingStrategy { .jsonData }
///     var name: String
/// }
/// ```
///
/// Reads through ``Defaults`` decode once per change of the stored value, not once per read.
public protocol DefaultsCodable: Codable, DefaultsSerializable {
    /// How values of this type are stored; ``DefaultsCodingStrategy/structured`` by default.
    static var defaultsCodingStrategy: DefaultsCodingStrategy { get }
}

extension DefaultsCodable {
    public static var defaultsCodingStrategy: DefaultsCodingStrategy { .structured }

    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try Self.decoded(from: defaultsValue) }

    public var defaultsValue: DefaultsValue { get throws(DefaultsError) { try encoded() } }

    public static var cachesDecodedValue: Bool { true }

    static func decoded(from value: DefaultsValue) throws(DefaultsError) -> Self {
        try DefaultsDecoder(strategy: defaultsCodingStrategy).decode(Self.self, from: value)
    }

    func encoded() throws(DefaultsError) -> DefaultsValue {
        try DefaultsEncoder(strategy: Self.defaultsCodingStrategy).encode(self)
    }
}

// A raw-value enum that is also `DefaultsCodable` matches both default implementations; this
// one decides. Its synthesized Codable form is the raw value too, so both store the same thing.
extension DefaultsCodable where Self: RawRepresentable, RawValue: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try Self.decoded(from: defaultsValue) }

    public var defaultsValue: DefaultsValue { get throws(DefaultsError) { try encoded() } }
}
