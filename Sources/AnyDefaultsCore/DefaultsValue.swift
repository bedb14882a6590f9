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
/// (backends need not keep a NaN's payload); strings, and the keys of dictionaries, compare by
/// their Unicode scalars, so `"caf\u{E9}"` and `"cafe\u{301}"` differ (a store keeps the
/// spelling written). This is the equality the caching layer uses to skip redundant writes.
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
    /// Compared without recursion (an explicit stack), so that values at the maximum nesting
    /// depth compare on a thread with a small stack.
    public static func == (lhs: DefaultsValue, rhs: DefaultsValue) -> Bool {
        // Scalars, the common case (a cache checking whether a write changes anything), without
        // the walk's bookkeeping.
        switch (lhs, rhs) {
        case let (.int(a), .int(b)): return a == b
        case let (.string(a), .string(b)): return sameScalars(a, b)
        case let (.bool(a), .bool(b)): return a == b
        case let (.double(a), .double(b)): return sameBits(a, b)
        default: break
        }
        var pending: [(DefaultsValue, DefaultsValue)] = []
        var current = (lhs, rhs)
        while true {
            switch current {
            case let (.bool(a), .bool(b)): if a != b { return false }
            case let (.int(a), .int(b)): if a != b { return false }
            case let (.double(a), .double(b)): if !Self.sameBits(a, b) { return false }
            case let (.string(a), .string(b)): if !Self.sameScalars(a, b) { return false }
            case let (.data(a), .data(b)): if a != b { return false }
            case let (.date(a), .date(b)):
                if !Self.sameBits(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate) { return false }
            case let (.array(a), .array(b)):
                guard a.count == b.count else { return false }
                if !Self.sameStorage(a, b) { pending.append(contentsOf: zip(a, b)) }
            case let (.dictionary(a), .dictionary(b)):
                // Keys match by canonical equivalence in a dictionary; they must also be spelled the same.
                guard a.count == b.count else { return false }
                guard !Self.sameStorage(a, b) else { break }
                for (key, value) in a {
                    guard let index = b.index(forKey: key), Self.sameScalars(b[index].key, key) else { return false }
                    pending.append((value, b[index].value))
                }
            default:
                return false
            }
            guard let next = pending.popLast() else { return true }
            current = next
        }
    }

    /// Whether two arrays or dictionaries are the same storage (a value compared with a copy of
    /// itself, as the caches do on every read of a collection or `Codable` value): then they are
    /// equal without visiting an element. The bits of such a value are its storage reference.
    @inline(__always)
    private static func sameStorage<T>(_ a: T, _ b: T) -> Bool {
        withUnsafeBytes(of: a) { a in withUnsafeBytes(of: b) { b in a.elementsEqual(b) } }
    }

    /// Hashed without recursion, like `==`; dictionaries by their keys in sorted order.
    public func hash(into hasher: inout Hasher) {
        var pending: [DefaultsValue] = [self]
        while let value = pending.popLast() {
            switch value {
            case .bool(let v): hasher.combine(0 as UInt8); hasher.combine(v)
            case .int(let v): hasher.combine(1 as UInt8); hasher.combine(v)
            case .double(let v): hasher.combine(2 as UInt8); hasher.combine(Self.canonicalBits(v))
            case .string(let v): hasher.combine(3 as UInt8); hasher.combine(v)
            case .data(let v): hasher.combine(4 as UInt8); hasher.combine(v)
            case .date(let v):
                hasher.combine(5 as UInt8); hasher.combine(Self.canonicalBits(v.timeIntervalSinceReferenceDate))
            case .array(let v):
                hasher.combine(6 as UInt8); hasher.combine(v.count)
                pending.append(contentsOf: v.reversed())
            case .dictionary(let v):
                hasher.combine(7 as UInt8); hasher.combine(v.count)
                for (key, item) in v.sorted(by: { $0.key > $1.key }) {
                    hasher.combine(key)
                    pending.append(item)
                }
            }
        }
    }

    /// Whether two strings have the same Unicode scalars (not only canonically equivalent ones).
    /// Hashing stays canonical, which is consistent: equal scalars are canonically equivalent.
    @inline(__always)
    static func sameScalars(_ a: String, _ b: String) -> Bool {
        // The same scalars are the same UTF-8 bytes (and then `==` holds too): one comparison of
        // bytes, none at all for the same string (a cached value compared with itself).
        if sameStorage(a, b) { return true }
        let same = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                guard x.count == y.count, let p = x.baseAddress, let q = y.baseAddress else { return x.count == y.count }
                return memcmp(p, q, x.count) == 0
            }
        }
        return (same ?? nil) ?? a.utf8.elementsEqual(b.utf8)
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
