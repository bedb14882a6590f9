import Foundation

/// `DefaultsValue` is `Codable` with the mapping of ``ExactJSON``, so that a value put into a
/// `Codable` type (an HTTP body, a message) comes back exactly:
///
/// | value | encoded as |
/// |---|---|
/// | `.bool`, `.int`, `.string` | the Boolean, 64-bit integer, string |
/// | `.double` with a fraction | the number |
/// | `.double` without one (`1.0`, `-0.0`, `1e300`), or not finite | `{"$double": 1}`, `{"$double": "nan"}`, `"inf"`, `"-inf"` |
/// | `.date` | `{"$date": "2024-05-01T12:00:00.25Z"}`, or seconds since 2001 where no text is exact |
/// | `.data` | `{"$data": "<base64>"}` |
/// | `.array` | an array |
/// | `.dictionary` | an object; `{"$dict": {…}}` around one whose only key starts with `$` |
///
/// The one difference from ``ExactJSON``'s own text: a double without a fraction is tagged,
/// because an `Encoder` cannot write `1.0` as such and a `Decoder` reads `1.0` as an integer.
/// ``ExactJSON/value(from:)`` reads what `JSONEncoder` writes for a value as that value; read text
/// that ``ExactJSON`` wrote with ``ExactJSON`` rather than `JSONDecoder`.
///
/// ```swift
/// struct Setting: Codable { var key: String; var value: DefaultsValue }
/// let body = try JSONEncoder().encode(Setting(key: "volume", value: .double(1)))
/// // {"key":"volume","value":{"$double":1}}
/// ```
///
/// Decoding rejects `null`, and an object of one `$`-member that is not a tag or whose tag's
/// content is wrong, with a `DecodingError`. Values nest without limit here; a store
/// rejects those deeper than ``DefaultsValue/maximumNestingDepth`` when they are written.
extension DefaultsValue: Codable {
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            if value.isFinite, value.rounded(.towardZero) != value {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            } else {
                var container = encoder.container(keyedBy: CodingTag.self)
                if value.isFinite {
                    try container.encode(value, forKey: CodingTag(JSONFileTag.double))
                } else {
                    try container.encode(JSONFileTag.nonFiniteName(value), forKey: CodingTag(JSONFileTag.double))
                }
            }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .data(let value):
            var container = encoder.container(keyedBy: CodingTag.self)
            try container.encode(value.base64EncodedString(), forKey: CodingTag(JSONFileTag.data))
        case .date(let value):
            var container = encoder.container(keyedBy: CodingTag.self)
            let interval = value.timeIntervalSinceReferenceDate
            let key = CodingTag(JSONFileTag.date)
            if let text = ExactTimestamp.string(for: interval) {
                try container.encode(text, forKey: key)
            } else if interval.isFinite {
                try container.encode(interval, forKey: key)
            } else {
                try container.encode(JSONFileTag.nonFiniteName(interval), forKey: key)
            }
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .dictionary(let entries):
            var container = encoder.container(keyedBy: CodingTag.self)
            if entries.count == 1, let key = entries.keys.first, key.hasPrefix("$") {
                try container.encode(entries, forKey: CodingTag(JSONFileTag.dictionary))
            } else {
                for (key, value) in entries { try container.encode(value, forKey: CodingTag(key)) }
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "null cannot be stored in a defaults value.")
            }
            if let scalar = Self.scalar(in: container) {
                self = scalar
                return
            }
        }
        if let container = try? decoder.container(keyedBy: CodingTag.self) {
            self = try Self.decodeObject(container)
            return
        }
        var container = try decoder.unkeyedContainer()
        var items: [DefaultsValue] = []
        if let count = container.count { items.reserveCapacity(count) }
        while !container.isAtEnd { items.append(try container.decode(DefaultsValue.self)) }
        self = .array(items)
    }

    /// The scalar `container` holds, if any. Booleans before numbers, integers before doubles: a
    /// decoder may convert the other way (a number with a fraction never reads as an integer).
    private static func scalar(in container: any SingleValueDecodingContainer) -> DefaultsValue? {
        if let value = try? container.decode(Bool.self) { return .bool(value) }
        if let value = try? container.decode(Int64.self) { return .int(value) }
        if let value = try? container.decode(Double.self) { return .double(value) }
        return (try? container.decode(String.self)).map(DefaultsValue.string)
    }

    /// A tagged value, or a dictionary.
    private static func decodeObject(_ container: KeyedDecodingContainer<CodingTag>) throws -> DefaultsValue {
        let keys = container.allKeys
        guard keys.count == 1, let only = keys.first, only.stringValue.hasPrefix("$") else {
            var entries: [String: DefaultsValue] = [:]
            entries.reserveCapacity(keys.count)
            for key in keys { entries[key.stringValue] = try container.decode(DefaultsValue.self, forKey: key) }
            return .dictionary(entries)
        }
        switch JSONFileTag(rawValue: only.stringValue) {
        case .double:
            if let name = try? container.decode(String.self, forKey: only) {
                guard let value = JSONFileTag.nonFiniteValue(name) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: only, in: container, debugDescription: #"$double takes "nan", "inf", "-inf" or a number."#)
                }
                return .double(value)
            }
            return .double(try container.decode(Double.self, forKey: only))
        case .date:
            if let text = try? container.decode(String.self, forKey: only) {
                guard let interval = ExactTimestamp.interval(from: text) ?? JSONFileTag.nonFiniteValue(text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: only, in: container,
                        debugDescription: #"$date takes a UTC date and time like "2024-05-01T12:00:00Z", seconds since 2001, "nan", "inf" or "-inf"."#)
                }
                return .date(Date(timeIntervalSinceReferenceDate: interval))
            }
            return .date(Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: only)))
        case .data:
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: only)) else {
                throw DecodingError.dataCorruptedError(forKey: only, in: container, debugDescription: "$data takes a base64 string.")
            }
            return .data(data)
        case .dictionary:
            return .dictionary(try container.decode([String: DefaultsValue].self, forKey: only))
        case nil:
            throw DecodingError.dataCorruptedError(
                forKey: only, in: container,
                debugDescription: #"An object with one member whose name starts with '$' is a tagged value ($data, $date, $double, $dict); write such a dictionary as {"$dict": {...}}."#)
        }
    }
}

/// Any string as a coding key: the members of a dictionary and the tags.
private struct CodingTag: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ stringValue: String) { self.stringValue = stringValue }
    init(_ tag: JSONFileTag) { stringValue = tag.rawValue }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
