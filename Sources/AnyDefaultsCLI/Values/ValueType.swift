import AnyDefaults
import AnyDefaultsCore
import ArgumentParser
import Foundation

/// The `--type` of `write`: how the VALUE argument is read.
enum ValueType: String, ExpressibleByArgument, CaseIterable {
    case string, int, double, bool, date, data, json

    /// Reads `text` as a value of this type.
    func parse(_ text: String) throws(DefaultsError) -> DefaultsValue {
        func bad(_ expected: String) -> DefaultsError {
            // The text is not quoted: it is meant to be stored, and stored values may be secrets.
            DefaultsError(.invalidValue, "expected \(expected).", backend: "anydefaults")
        }
        switch self {
        case .string:
            return .string(text)
        case .int:
            guard let value = Int64(text.trimmingCharacters(in: .whitespaces)) else {
                throw bad("a whole number from \(Int64.min) to \(Int64.max)")
            }
            return .int(value)
        case .double:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            switch trimmed.lowercased() {
            case "nan": return .double(.nan)
            case "inf", "infinity", "+inf", "+infinity": return .double(.infinity)
            case "-inf", "-infinity": return .double(-.infinity)
            default:
                switch ExactJSON.double(fromLiteral: trimmed) {
                case .success(let value): return .double(value)
                case .failure(let problem) where Double(trimmed)?.isNaN == false: throw bad("a number within the range of a double: \(problem.reason)")
                case .failure: throw bad("a number (or nan, inf, -inf)")
                }
            }
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1", "on": return .bool(true)
            case "false", "no", "0", "off": return .bool(false)
            default: throw bad("a boolean (true or false)")
            }
        case .date:
            guard let date = Self.parseDate(text) else {
                throw bad("an ISO 8601 date such as 2026-11-21T09:30:00Z or 2026-11-21T09:30:00.250+01:00")
            }
            return .date(date)
        case .data:
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw bad("base64")
            }
            return .data(data)
        case .json:
            // Plain JSON, plus the exact tagged forms that `read` prints ({"$date": ...} ...).
            return try ExactJSON.value(from: text)
        }
    }

    /// A date as `read` prints one: `YYYY-MM-DDTHH:MM:SS`, an optional fraction, `Z` or `±HH:MM`
    /// (or a date alone, `YYYY-MM-DD`, at midnight UTC). Read exactly as the `{"$date": ...}` form
    /// is (``ExactTimestamp``): proleptic Gregorian at every year, a fraction to the digit, and no
    /// day, hour or offset out of range — Foundation's ISO 8601 parser reads years before 1582
    /// as Julian dates and rolls `02-30` or `25:00` over instead of refusing them.
    static func parseDate(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let full = text.utf8.count == 10 ? text + "T00:00:00Z" : text
        return ExactTimestamp.interval(from: full).map(Date.init(timeIntervalSinceReferenceDate:))
    }
}
