import AnyDefaultsCore
import Foundation

/// The values whose exact round trip the contract requires, by name.
enum EdgeValues {
    static let all: [(name: String, value: DefaultsValue)] = {
        var values: [(String, DefaultsValue)] = [
            ("false", .bool(false)), ("true", .bool(true)),
            ("int 0", .int(0)), ("int 1", .int(1)), ("int -1", .int(-1)),
            ("int 63", .int(63)), ("int 64", .int(64)), ("int -64", .int(-64)), ("int -65", .int(-65)),
            ("Int64.max", .int(.max)), ("Int64.min", .int(.min)),
            ("double 0", .double(0)), ("double -0", .double(-0.0)), ("pi", .double(.pi)),
            ("+inf", .double(.infinity)), ("-inf", .double(-.infinity)),
            ("nan", .double(.nan)), ("nan payload", .double(Double(nan: 0x1234, signaling: false))),
            ("negative nan", .double(-Double.nan)),
            ("least nonzero", .double(.leastNonzeroMagnitude)), ("greatest finite", .double(.greatestFiniteMagnitude)),
            ("subnormal", .double(-Double.leastNormalMagnitude / 3)),
            ("empty string", .string("")), ("ascii", .string("dark")),
            ("composed", .string("caf\u{E9}")), ("decomposed", .string("cafe\u{301}")),
            ("emoji", .string("👩‍👩‍👧‍👦🇨🇭")), ("nul", .string("a\u{0}b")), ("cjk", .string("設定")),
            ("long string", .string(String(repeating: "ü", count: 70_000))),
            ("empty data", .data(Data())), ("all bytes", .data(Data((0...255).map { UInt8($0) }))),
            ("3 MiB data", .data(Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))),
            ("reference date", .date(Date(timeIntervalSinceReferenceDate: 0))),
            ("date -0", .date(Date(timeIntervalSinceReferenceDate: -0.0))),
            ("distant past", .date(.distantPast)), ("distant future", .date(.distantFuture)),
            ("fractional date", .date(Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7))),
            ("empty array", .array([])), ("empty dictionary", .dictionary([:])),
            ("nested empties", .array([.array([]), .dictionary([:]), .array([.array([])])])),
            ("mixed array", .array([.int(1), .double(1), .bool(true), .string("1"), .data(Data([1])), .date(Date(timeIntervalSinceReferenceDate: 1))])),
            ("dictionary", .dictionary(["": .int(0), "a": .dictionary(["b": .array([.double(-0.0), .double(.nan)])]), "ключ": .string("значение")])),
        ]
        var deep = DefaultsValue.string("bottom")
        for level in 0..<(DefaultsValue.maximumNestingDepth - 1) {
            deep = level.isMultiple(of: 2) ? .array([deep]) : .dictionary(["k": deep])
        }
        values.append(("deepest allowed", .array([deep])))
        return values
    }()

    /// Whether `a` and `b` are the same to the bit: doubles and dates compare by bit pattern, NaN
    /// payloads included (stricter than `==`).
    static func identical(_ a: DefaultsValue, _ b: DefaultsValue) -> Bool {
        var pending = [(a, b)]
        while let (a, b) = pending.popLast() {
            switch (a, b) {
            case let (.double(x), .double(y)):
                guard x.bitPattern == y.bitPattern else { return false }
            case let (.date(x), .date(y)):
                guard x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern else { return false }
            case let (.array(x), .array(y)):
                guard x.count == y.count else { return false }
                pending.append(contentsOf: zip(x, y))
            case let (.dictionary(x), .dictionary(y)):
                guard x.count == y.count else { return false }
                for (key, value) in x {
                    guard let other = y[key] else { return false }
                    pending.append((value, other))
                }
            case let (.string(x), .string(y)):
                // Compare the scalars, not canonical equivalence.
                guard Array(x.unicodeScalars) == Array(y.unicodeScalars) else { return false }
            default:
                guard a == b else { return false }
            }
        }
        return true
    }
}

/// A small deterministic random number generator (SplitMix64), so that generated cases repeat.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
