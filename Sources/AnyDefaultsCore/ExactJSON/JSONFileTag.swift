/// The tagged forms of the JSON file format: a one-member object whose member name starts with
/// `$` stands for a value plain JSON cannot carry exactly (see Docs/Backends.md, "JSON file").
///
/// ```json
/// {"$data": "AAEC"}   {"$date": "2024-05-01T12:00:00Z"}   {"$double": "nan"}   {"$dict": {"$id": 7}}
/// ```
enum JSONFileTag: String, CaseIterable {
    /// Bytes, as standard base64 with padding.
    case data = "$data"
    /// A date: exact ISO 8601 UTC text, or seconds since 2001-01-01T00:00:00Z as a number, or
    /// `"nan"`, `"inf"`, `"-inf"`.
    case date = "$date"
    /// A double JSON numbers cannot hold: `"nan"`, `"inf"` or `"-inf"` (a number is accepted too).
    case double = "$double"
    /// A dictionary that would otherwise read as a tag: one key, starting with `$`.
    case dictionary = "$dict"

    /// Whether `members` of a dictionary must be wrapped in `$dict` to be read back as a dictionary.
    static func needsWrapping<Value>(_ members: [(key: String, value: Value)]) -> Bool {
        members.count == 1 && members[0].key.hasPrefix("$")
    }

    /// Text for a non-finite double, as it appears inside `$double` and `$date`.
    static func nonFiniteName(_ value: Double) -> String {
        value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf")
    }

    /// The non-finite double a name stands for, if it is one.
    static func nonFiniteValue(_ name: String) -> Double? {
        switch name {
        case "nan": .nan
        case "inf", "+inf": .infinity
        case "-inf": -.infinity
        default: nil
        }
    }
}
