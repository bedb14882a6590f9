import Foundation

/// A value a defaults store can hold: the property-list types, closed and `Sendable`.
///
/// Every backend stores every case exactly: `Int64.min` and `.max`, every `Double` bit for bit
/// (including `-0.0` and the infinities; a NaN reads back as a NaN), a `Date` as the
/// `timeIntervalSinceReferenceDate` it holds, `Data` byte for byte, any Unicode string, and nested
/// or empty arrays and dictionaries. The cases never convert into one another: `.int(1)`,
/// `.double(1)` and `.bool(true)` are three different values.
///
/// ```swift
/// let theme: DefaultsValue = .dictionary(["name": .string("dark"), "contrast": .double(1.5)])
/// try store.setValue(theme, forKey: "ui.theme")
/// ```
///
/// ## Equality
/// Two values are equal when a store would hold the same thing for both: doubles and dates
/// compare by their bits, so `-0.0` differs from `0.0`, and every NaN equals every other NaN
/// (backends need not keep a NaN's payload). This is the equality the caching layer uses to skip
/// redundant writes.
public enum DefaultsValue: Sendable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case array([DefaultsValue])
    case dictionary([String: DefaultsValue])
}

extension DefaultsValue: Hashable {
    public static func == (lhs: DefaultsValue, rhs: DefaultsValue) -> Bool {
        switch (lhs, rhs) {
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return Self.sameBits(a, b)
        case let (.string(a), .string(b)): return a == b
        case let (.data(a), .data(b)): return a == b
        case let (.date(a), .date(b)):
            return Self.sameBits(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case let (.array(a), .array(b)): return a == b
        case let (.dictionary(a), .dictionary(b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let v): hasher.combine(0 as UInt8); hasher.combine(v)
        case .int(let v): hasher.combine(1 as UInt8); hasher.combine(v)
        case .double(let v): hasher.combine(2 as UInt8); hasher.combine(Self.canonicalBits(v))
        case .string(let v): hasher.combine(3 as UInt8); hasher.combine(v)
        case .data(let v): hasher.combine(4 as UInt8); hasher.combine(v)
        case .date(let v):
            hasher.combine(5 as UInt8); hasher.combine(Self.canonicalBits(v.timeIntervalSinceReferenceDate))
        case .array(let v): hasher.combine(6 as UInt8); hasher.combine(v)
        case .dictionary(let v): hasher.combine(7 as UInt8); hasher.combine(v)
        }
    }

    @inline(__always)
    private static func sameBits(_ a: Double, _ b: Double) -> Bool {
        a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
    }

    @inline(__always)
    static func canonicalBits(_ v: Double) -> UInt64 {
        v.isNaN ? Double.nan.bitPattern : v.bitPattern
    }
}

extension DefaultsValue {
    /// The name of the case, as used in messages: `"bool"`, `"int"`, `"double"`, `"string"`,
    /// `"data"`, `"date"`, `"array"` or `"dictionary"`.
    public var typeName: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// How deeply arrays and dictionaries nest inside this value: 0 for a scalar, 1 for a flat
    /// array or dictionary.
    ///
    /// Computed without recursion, so it is safe on values of any depth.
    public var nestingDepth: Int {
        var deepest = 0
        var pending: [(DefaultsValue, Int)] = [(self, 0)]
        while let (value, depth) = pending.popLast() {
            switch value {
            case .array(let items):
                deepest = max(deepest, depth + 1)
                pending.append(contentsOf: items.lazy.map { ($0, depth + 1) })
            case .dictionary(let items):
                deepest = max(deepest, depth + 1)
                pending.append(contentsOf: items.values.lazy.map { ($0, depth + 1) })
            default:
                continue
            }
        }
        return deepest
    }

    /// The deepest nesting of arrays and dictionaries every built-in backend accepts.
    ///
    /// Deeper values are rejected with ``DefaultsError/Code-swift.struct/invalidValue`` before
    /// anything is written, so that no encoder or decoder recurses deep enough to exhaust a
    /// thread's stack.
    public static let maximumNestingDepth = 512
}
