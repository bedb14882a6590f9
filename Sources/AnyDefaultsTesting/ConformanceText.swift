import AnyDefaultsCore
import Foundation

/// How failure messages show keys and values: exact (every scalar that is not printable ASCII
/// escaped, so NFC and NFD spellings look different), and short (long keys and values cut, with
/// their full length).
enum ConformanceText {
    /// The longest part of a key or string shown, in scalars.
    static let shownScalars = 48

    /// The escapes of a Swift string literal that have a letter of their own.
    private static let escapes: [Unicode.Scalar: String] = [
        "\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0",
    ]

    /// A string as a quoted literal: printable ASCII as is, everything else escaped
    /// (`"caf\u{E9}"` and `"cafe\u{301}"` differ visibly), cut after ``shownScalars`` scalars
    /// with the full length in UTF-8 bytes.
    static func literal(_ text: String) -> String {
        var shown = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == shownScalars {
                return shown + "\"… (\(text.utf8.count) UTF-8 bytes)"
            }
            count += 1
            if let escape = escapes[scalar] {
                shown += escape
            } else if scalar.value >= 0x20 && scalar.value < 0x7F {
                shown.unicodeScalars.append(scalar)
            } else {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return shown + "\""
    }

    /// A key for messages: its literal, cut when long.
    static func key(_ key: String) -> String { literal(key) }

    /// Keys for messages, sorted, at most `limit` of them.
    static func keys(_ keys: some Collection<String>, limit: Int = 6) -> String {
        let sorted = keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let shown = sorted.prefix(limit).map(literal).joined(separator: ", ")
        return "[\(shown)\(sorted.count > limit ? ", … \(sorted.count) in all" : "")]"
    }

    /// A precise description of a value: doubles and dates with their bits, strings escaped, long
    /// strings, data and containers shortened with their sizes.
    static func value(_ value: DefaultsValue?) -> String {
        guard let value else { return "nil (absent)" }
        return describe(value, depth: 0)
    }

    private static func bits(_ d: Double) -> String {
        d.isNaN ? "nan" : "\(d) [0x\(String(d.bitPattern, radix: 16))]"
    }

    private static func describe(_ value: DefaultsValue, depth: Int) -> String {
        if depth > 3 { return "…(\(value.typeName), \(value.nestingDepth) levels)" }
        switch value {
        case .bool(let v): return ".bool(\(v))"
        case .int(let v): return ".int(\(v))"
        case .double(let v): return ".double(\(bits(v)))"
        case .date(let v): return ".date(\(bits(v.timeIntervalSinceReferenceDate)))"
        case .string(let v): return ".string(\(literal(v)))"
        case .data(let v):
            let hex = v.prefix(16).map { String(format: "%02x", $0) }.joined()
            return ".data(\(v.count) bytes: \(hex)\(v.count > 16 ? "…" : ""))"
        case .array(let items):
            let shown = items.prefix(4).map { describe($0, depth: depth + 1) }.joined(separator: ", ")
            return ".array([\(shown)\(items.count > 4 ? ", … \(items.count) in all" : "")])"
        case .dictionary(let items):
            let shown = items.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.prefix(4)
                .map { "\(literal($0.key)): \(describe($0.value, depth: depth + 1))" }.joined(separator: ", ")
            return ".dictionary([\(shown)\(items.count > 4 ? ", … \(items.count) in all" : "")])"
        }
    }

    /// Where two values first differ, for a failure message: a path such as `[3]["k"]` and the
    /// two parts there; `nil` when they are exactly equal.
    static func firstDifference(_ actual: DefaultsValue?, _ expected: DefaultsValue?) -> String? {
        guard let actual, let expected else {
            return actual == nil && expected == nil ? nil : "\(value(actual)) instead of \(value(expected))"
        }
        var pending: [(DefaultsValue, DefaultsValue, String)] = [(actual, expected, "")]
        while let (a, e, path) = pending.popLast() {
            switch (a, e) {
            case let (.array(x), .array(y)):
                guard x.count == y.count else { return "at \(path.isEmpty ? "top" : path): \(x.count) items instead of \(y.count)" }
                for index in x.indices.reversed() { pending.append((x[index], y[index], path + "[\(index)]")) }
            case let (.dictionary(x), .dictionary(y)):
                let xKeys = Set(x.keys.map { Array($0.utf8) })
                let yKeys = Set(y.keys.map { Array($0.utf8) })
                if xKeys != yKeys {
                    let missing = y.keys.filter { !xKeys.contains(Array($0.utf8)) }
                    let extra = x.keys.filter { !yKeys.contains(Array($0.utf8)) }
                    return "at \(path.isEmpty ? "top" : path): keys missing \(keys(missing)), extra \(keys(extra))"
                }
                for (key, item) in x { if let other = y[key] { pending.append((item, other, path + "[\(literal(key))]")) } }
            default:
                if !ConformanceExactness.scalarEqual(a, e) {
                    return "at \(path.isEmpty ? "top" : path): \(value(a)) instead of \(value(e))"
                }
            }
        }
        return nil
    }
}

/// The equality the suite checks with: ``DefaultsValue``'s (bit-exact doubles and dates, NaN equal
/// to NaN, no conversion between cases), but strings and dictionary keys compared by their
/// Unicode scalars rather than by canonical equivalence, so a provider that normalizes text fails.
/// Iterative, so that it is safe on values of any depth and on small stacks.
enum ConformanceExactness {
    static func equal(_ a: DefaultsValue?, _ b: DefaultsValue?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        var pending: [(DefaultsValue, DefaultsValue)] = [(a, b)]
        while let (x, y) = pending.popLast() {
            switch (x, y) {
            case let (.array(p), .array(q)):
                guard p.count == q.count else { return false }
                for index in p.indices { pending.append((p[index], q[index])) }
            case let (.dictionary(p), .dictionary(q)):
                guard p.count == q.count else { return false }
                // Every key of one must be in the other with the same scalars: canonical
                // equivalence alone would let a normalized key pass.
                let qKeys = Set(q.keys.map { Array($0.unicodeScalars.map(\.value)) })
                for (key, item) in p {
                    guard qKeys.contains(Array(key.unicodeScalars.map(\.value))), let other = q[key] else { return false }
                    pending.append((item, other))
                }
            default:
                if !scalarEqual(x, y) { return false }
            }
        }
        return true
    }

    /// Equality of two scalars (not containers): strings by their scalars, the rest as
    /// ``DefaultsValue`` compares them.
    static func scalarEqual(_ a: DefaultsValue, _ b: DefaultsValue) -> Bool {
        if case .string(let x) = a, case .string(let y) = b {
            return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        }
        switch (a, b) {
        case (.array, _), (.dictionary, _), (_, .array), (_, .dictionary): return false
        default: return a == b
        }
    }

    /// Whether two keys are the same key: canonically equivalent (Swift's `==`).
    static func sameKey(_ a: String, _ b: String) -> Bool { a == b }
}
