import Foundation

/// A type that can be stored in a defaults store directly, as a ``DefaultsValue``.
///
/// The standard library and Foundation types a setting is usually made of conform already:
/// `Bool`, every integer width, `Double`, `Float`, `String`, `Data`, `Date`, `URL`, `UUID`,
/// `Decimal`, arrays, sets and `String`-keyed dictionaries of conforming types, optionals
/// (`nil` is stored as an absent key) and ``DefaultsValue`` itself. Two one-line opt-ins cover
/// your own types:
///
/// ```swift
/// enum Theme: String, DefaultsSerializable { case light, dark }      // stored as its raw value
/// struct Layout: Codable, DefaultsCodable { var columns: Int }        // stored as a dictionary
///
/// defaults[.theme] = .dark
/// ```
///
/// Reading is strict, with widening only where nothing is lost, and the same rules as
/// ``DefaultsDecoder``: an integer type reads `.int` in range and `.double` holding a whole
/// number in range (anything else, including a value too large for the width, is
/// ``DefaultsError/Code-swift.struct/typeMismatch``, never wrapped or truncated); `Double` reads
/// `.int` too; `Bool` reads `.int(0)` and `.int(1)`; strings, data and dates are never converted.
///
/// To conform a type of your own, say how it is stored and read:
///
/// ```swift
/// struct Celsius: DefaultsSerializable {
///     var degrees: Double
///     init(degrees: Double) { self.degrees = degrees }
///     init(defaultsValue: DefaultsValue) throws(DefaultsError) {
///         degrees = try Double(defaultsValue: defaultsValue)
///     }
///     var defaultsValue: DefaultsValue { .double(degrees) }
/// }
/// ```
public protocol DefaultsSerializable: Sendable {
    /// Reads a value from what a store holds.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/typeMismatch`` when the stored value does not
    ///   have the right shape, ``DefaultsError/Code-swift.struct/decodingFailed`` when a
    ///   `Codable` value cannot be decoded.
    init(defaultsValue: DefaultsValue) throws(DefaultsError)

    /// What a store holds for this value.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` for what a store cannot hold,
    ///   such as a `UInt64` above `Int64.max` or `nil` inside an array.
    var defaultsValue: DefaultsValue { get throws(DefaultsError) }

    /// Whether reads through ``Defaults`` keep the decoded value and reuse it until the stored
    /// value changes. `true` for collections and `Codable` types, where decoding costs more than
    /// checking that the stored value is unchanged; `false` for scalars.
    static var cachesDecodedValue: Bool { get }
}

extension DefaultsSerializable {
    public static var cachesDecodedValue: Bool { false }
}

/// The backend name in errors raised by the typed bridge.
let bridgeBackend = "DefaultsSerializable"

extension DefaultsError {
    /// A ``Code-swift.struct/typeMismatch`` for a stored value that cannot be read as `type`.
    static func typeMismatch(_ mismatch: ScalarMismatch) -> DefaultsError {
        DefaultsError(.typeMismatch, "Cannot read \(mismatch.expected) at the top level: \(mismatch.reason).", backend: bridgeBackend)
    }

    @usableFromInline
    static func typeMismatch(expected type: Any.Type, found value: DefaultsValue) -> DefaultsError {
        typeMismatch(ScalarConversion.mismatch(.wrongType, type, value))
    }
}

/// Runs a ``ScalarConversion`` function, turning its failure into a typed-bridge error.
@inline(__always)
func bridged<T>(_ value: DefaultsValue, _ convert: (DefaultsValue) throws(ScalarMismatch) -> T) throws(DefaultsError) -> T {
    do {
        return try convert(value)
    } catch {
        throw .typeMismatch(error)
    }
}

// MARK: - Scalars

extension DefaultsValue: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) { self = defaultsValue }
    public var defaultsValue: DefaultsValue { self }
}

extension Bool: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.bool) }
    public var defaultsValue: DefaultsValue { .bool(self) }
}

extension String: DefaultsSerializable {
    // Inlinable, like `Int`'s: read on hot paths, where a call would cost more than the match.
    @inlinable
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        guard case .string(let string) = defaultsValue else { throw .typeMismatch(expected: String.self, found: defaultsValue) }
        self = string
    }

    public var defaultsValue: DefaultsValue { .string(self) }
}

extension Double: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.double) }
    public var defaultsValue: DefaultsValue { .double(self) }
}

extension Float: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.float) }
    public var defaultsValue: DefaultsValue { .double(Double(self)) }
}

extension Data: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.data) }
    public var defaultsValue: DefaultsValue { .data(self) }
}

extension Date: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.date) }
    public var defaultsValue: DefaultsValue { .date(self) }
}

/// Stored as its absolute string.
extension URL: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.url) }
    public var defaultsValue: DefaultsValue { .string(absoluteString) }
}

/// Stored as its canonical string, `"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"`.
extension UUID: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.uuid) }
    public var defaultsValue: DefaultsValue { .string(uuidString) }
}

/// Stored as its exact decimal string; numbers are read too.
extension Decimal: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) { self = try bridged(defaultsValue, ScalarConversion.decimal) }
    public var defaultsValue: DefaultsValue { ScalarConversion.storedDecimal(self) }
}

// MARK: - Integers

extension DefaultsSerializable where Self: FixedWidthInteger {
    /// Reads `.int` in range, or `.double` holding a whole number in range.
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        self = try bridged(defaultsValue, ScalarConversion.integer)
    }

    /// Stored as `.int`; an unsigned value above `Int64.max` fails rather than wrap.
    public var defaultsValue: DefaultsValue {
        get throws(DefaultsError) {
            guard let stored = ScalarConversion.storedInteger(self) else {
                throw DefaultsError(.encodingFailed, "A \(Self.self) larger than Int64.max cannot be stored.", backend: bridgeBackend)
            }
            return stored
        }
    }
}

extension Int: DefaultsSerializable {
    // Spelled out and inlinable: the commonest setting type, read on hot paths, where a call
    // would cost more than the match. Anything but an `.int` takes the general conversion.
    @inlinable
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        guard case .int(let value) = defaultsValue, let int = Int(exactly: value) else {
            self = try Int.converting(defaultsValue)
            return
        }
        self = int
    }

    @usableFromInline
    static func converting(_ value: DefaultsValue) throws(DefaultsError) -> Int {
        try bridged(value, ScalarConversion.integer)
    }

    public var defaultsValue: DefaultsValue { .int(Int64(self)) }
}

extension Int8: DefaultsSerializable {}
extension Int16: DefaultsSerializable {}
extension Int32: DefaultsSerializable {}
extension Int64: DefaultsSerializable {}
extension UInt: DefaultsSerializable {}
extension UInt8: DefaultsSerializable {}
extension UInt16: DefaultsSerializable {}
extension UInt32: DefaultsSerializable {}
extension UInt64: DefaultsSerializable {}
