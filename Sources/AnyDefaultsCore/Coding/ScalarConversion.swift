import Foundation

/// Why a stored value could not be read as a scalar type. Never holds the value itself, only
/// its kind, because values may be secrets.
struct ScalarMismatch: Error, Sendable {
    enum Kind: Sendable { case wrongType, outOfRange, invalidFormat }

    var kind: Kind
    /// The Swift type that was asked for, e.g. `"Int8"`.
    var expected: String
    /// The kind of value found (``DefaultsValue/typeName``).
    var found: String

    /// A phrase for messages, e.g. "expected Int8, found a string".
    var reason: String {
        switch kind {
        case .wrongType: "expected \(expected), found \(article(found)) \(found)"
        case .outOfRange: "the stored \(found) does not fit in \(expected)"
        case .invalidFormat: "the stored \(found) is not a valid \(expected)"
        }
    }

    private func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }
}

/// The one place that decides which stored cases convert to which scalar Swift types, shared by
/// ``DefaultsDecoder`` and the ``DefaultsSerializable`` conformances so both read alike.
///
/// The rules are strict, with widening only where nothing is lost:
/// - an integer type reads `.int` in range, and `.double` holding a whole number in range;
/// - `Double` reads `.double` and `.int`; `Float` also, if the magnitude fits;
/// - `Bool` reads `.bool`, and `.int(0)` / `.int(1)` (what property lists written through
///   `NSNumber` hold);
/// - strings, data and dates are never converted from other cases.
enum ScalarConversion {
    @inline(__always)
    static func mismatch(_ kind: ScalarMismatch.Kind, _ expected: Any.Type, _ value: DefaultsValue) -> ScalarMismatch {
        ScalarMismatch(kind: kind, expected: String(describing: expected), found: value.typeName)
    }

    static func bool(_ value: DefaultsValue) throws(ScalarMismatch) -> Bool {
        switch value {
        case .bool(let bool): return bool
        case .int(0): return false
        case .int(1): return true
        default: throw mismatch(.wrongType, Bool.self, value)
        }
    }

    static func integer<T: FixedWidthInteger>(_ value: DefaultsValue) throws(ScalarMismatch) -> T {
        try integer(value, as: T.self)
    }

    static func integer<T: FixedWidthInteger>(_ value: DefaultsValue, as type: T.Type) throws(ScalarMismatch) -> T {
        switch value {
        case .int(let int):
            guard let result = T(exactly: int) else { throw mismatch(.outOfRange, T.self, value) }
            return result
        case .double(let double):
            guard let result = T(exactly: double) else {
                // A fraction is a wrong type; a whole number too large does not fit.
                let kind: ScalarMismatch.Kind = double.isFinite && double.rounded(.towardZero) == double ? .outOfRange : .wrongType
                throw mismatch(kind, T.self, value)
            }
            return result
        default:
            throw mismatch(.wrongType, T.self, value)
        }
    }

    static func double(_ value: DefaultsValue) throws(ScalarMismatch) -> Double {
        switch value {
        case .double(let double): return double
        case .int(let int): return Double(int)
        default: throw mismatch(.wrongType, Double.self, value)
        }
    }

    static func float(_ value: DefaultsValue) throws(ScalarMismatch) -> Float {
        switch value {
        case .double(let double):
            if double.isFinite && double.magnitude > Double(Float.greatestFiniteMagnitude) {
                throw mismatch(.outOfRange, Float.self, value)
            }
            return Float(double)
        case .int(let int): return Float(int)
        default: throw mismatch(.wrongType, Float.self, value)
        }
    }

    static func string(_ value: DefaultsValue) throws(ScalarMismatch) -> String {
        guard case .string(let string) = value else { throw mismatch(.wrongType, String.self, value) }
        return string
    }

    static func data(_ value: DefaultsValue) throws(ScalarMismatch) -> Data {
        guard case .data(let data) = value else { throw mismatch(.wrongType, Data.self, value) }
        return data
    }

    static func date(_ value: DefaultsValue) throws(ScalarMismatch) -> Date {
        guard case .date(let date) = value else { throw mismatch(.wrongType, Date.self, value) }
        return date
    }

    /// A URL is stored as its absolute string.
    static func url(_ value: DefaultsValue) throws(ScalarMismatch) -> URL {
        guard case .string(let string) = value else { throw mismatch(.wrongType, URL.self, value) }
        guard let url = URL(string: string) else { throw mismatch(.invalidFormat, URL.self, value) }
        return url
    }

    /// A UUID is stored as its canonical string.
    static func uuid(_ value: DefaultsValue) throws(ScalarMismatch) -> UUID {
        guard case .string(let string) = value else { throw mismatch(.wrongType, UUID.self, value) }
        guard let uuid = UUID(uuidString: string) else { throw mismatch(.invalidFormat, UUID.self, value) }
        return uuid
    }

    /// A Decimal is stored as its exact decimal string (`"NaN"` for a NaN); numbers are read too.
    static func decimal(_ value: DefaultsValue) throws(ScalarMismatch) -> Decimal {
        switch value {
        case .string("NaN"):
            // What storedDecimal writes for Decimal.nan, which Decimal(string:) does not read.
            return .nan
        case .string(let string):
            guard let decimal = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")) else {
                throw mismatch(.invalidFormat, Decimal.self, value)
            }
            return decimal
        case .int(let int): return Decimal(int)
        case .double(let double) where double.isFinite:
            // Decimal(Double) gives NaN for magnitudes beyond Decimal's range (about 1e-128 to 1e127).
            let decimal = Decimal(double)
            guard !decimal.isNaN else { throw mismatch(.outOfRange, Decimal.self, value) }
            return decimal
        default: throw mismatch(.wrongType, Decimal.self, value)
        }
    }

    /// Stores an integer of any width, or fails if it exceeds `Int64` (never wraps).
    static func storedInteger<T: FixedWidthInteger>(_ value: T) -> DefaultsValue? {
        Int64(exactly: value).map { .int($0) }
    }

    static func storedDecimal(_ value: Decimal) -> DefaultsValue {
        .string(value.description)
    }
}
