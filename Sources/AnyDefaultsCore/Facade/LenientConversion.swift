import Foundation

/// The conversions of the `UserDefaults`-shaped getters (`integer(forKey:)`, `bool(forKey:)`...),
/// which follow `UserDefaults` rather than the strict typed bridge: numbers convert into one
/// another, strings are parsed, and what cannot convert reads as the getter's empty value.
///
/// One departure: a number that does not fit (`integer(forKey:)` on `.double(1e300)`) is an
/// error reported to the handler, not a wrapped or clamped number.
@usableFromInline
enum LenientConversion {
    @usableFromInline
    enum Outcome<T> {
        case value(T)
        /// Not convertible: the getter's empty value, silently, as `UserDefaults` does.
        case notANumber
        /// Numeric but out of range: reported.
        case outOfRange
    }

    @usableFromInline
    static func integer(_ value: DefaultsValue) -> Outcome<Int> {
        switch value {
        case .int(let int): return Int(exactly: int).map(Outcome.value) ?? .outOfRange
        case .double(let double): return truncated(double)
        case .bool(let bool): return .value(bool ? 1 : 0)
        case .string(let string):
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            if let int = Int(trimmed) { return .value(int) }
            if let double = Double(trimmed) { return truncated(double) }
            return .notANumber
        default: return .notANumber
        }
    }

    /// Truncated toward zero, as `UserDefaults` does.
    private static func truncated(_ double: Double) -> Outcome<Int> {
        guard !double.isNaN else { return .notANumber }
        return Int(exactly: double.rounded(.towardZero)).map(Outcome.value) ?? .outOfRange
    }

    @usableFromInline
    static func double(_ value: DefaultsValue) -> Double? {
        switch value {
        case .double(let double): double
        case .int(let int): Double(int)
        case .bool(let bool): bool ? 1 : 0
        case .string(let string): Double(string.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// `true` for `true`, a non-zero number, and the strings `"true"`/`"yes"` (any case) or a
    /// non-zero number.
    @usableFromInline
    static func bool(_ value: DefaultsValue) -> Bool {
        switch value {
        case .bool(let bool): return bool
        case .int(let int): return int != 0
        case .double(let double): return double != 0 && !double.isNaN
        case .string(let string):
            let word = string.trimmingCharacters(in: .whitespaces).lowercased()
            if word == "true" || word == "yes" { return true }
            return Double(word).map { $0 != 0 } ?? false
        default: return false
        }
    }

    /// Strings as they are, and numbers as their text (a Bool as `"1"` or `"0"`, as `NSNumber`).
    @usableFromInline
    static func string(_ value: DefaultsValue) -> String? {
        switch value {
        case .string(let string): string
        case .int(let int): String(int)
        case .double(let double): String(double)
        case .bool(let bool): bool ? "1" : "0"
        default: nil
        }
    }

    /// An absolute URL string, or a file path (`/...` or `~/...`).
    static func url(_ value: DefaultsValue) -> URL? {
        guard case .string(let string) = value, !string.isEmpty else { return nil }
        if string.hasPrefix("/") { return URL(fileURLWithPath: string) }
        if string.hasPrefix("~") { return URL(fileURLWithPath: NSString(string: string).expandingTildeInPath) }
        guard let url = URL(string: string), url.scheme != nil else { return nil }
        return url
    }
}

extension DefaultsValue {
    /// The value as plain Swift values, as `UserDefaults.object(forKey:)` gives them: `Bool`,
    /// `Int`, `Double`, `String`, `Data`, `Date`, `[any Sendable]` and `[String: any Sendable]`.
    var plainValue: any Sendable {
        switch self {
        case .bool(let value): value
        case .int(let value): Int(exactly: value) ?? value
        case .double(let value): value
        case .string(let value): value
        case .data(let value): value
        case .date(let value): value
        case .array(let values): values.map(\.plainValue)
        case .dictionary(let values): values.mapValues(\.plainValue)
        }
    }
}
