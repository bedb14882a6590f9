import AnyDefaultsCore
import Foundation

/// The values the conformance suite stores: every edge case of the value model, each with a name
/// that failure messages use. Public so that tests of your own can reuse them.
public enum ConformanceValues {
    /// Every edge value, small ones first and the multi-megabyte ones last.
    public static let edgeCases: [(name: String, value: DefaultsValue)] = scalars + strings + dates + containers + large

    static let scalars: [(name: String, value: DefaultsValue)] = [
        ("Bool true", .bool(true)),
        ("Bool false", .bool(false)),
        ("Int64 0", .int(0)),
        ("Int64 1", .int(1)),
        ("Int64 -1", .int(-1)),
        ("Int64.min", .int(.min)),
        ("Int64.max", .int(.max)),
        ("Int64 2^53+1 (not a Double)", .int(9_007_199_254_740_993)),
        ("Int64 Int32.min-1", .int(Int64(Int32.min) - 1)),
        ("Double 0.0", .double(0.0)),
        ("Double -0.0", .double(-0.0)),
        ("Double 1.0", .double(1.0)),
        ("Double 0.1", .double(0.1)),
        ("Double 1/3", .double(1.0 / 3.0)),
        ("Double.pi", .double(.pi)),
        ("Double -1.5e-300", .double(-1.5e-300)),
        ("Double 2^53+2", .double(9_007_199_254_740_994)),
        ("Double.leastNonzeroMagnitude (subnormal)", .double(.leastNonzeroMagnitude)),
        ("Double.leastNormalMagnitude", .double(.leastNormalMagnitude)),
        ("Double.greatestFiniteMagnitude", .double(.greatestFiniteMagnitude)),
        ("Double -greatestFiniteMagnitude", .double(-.greatestFiniteMagnitude)),
        ("Double +infinity", .double(.infinity)),
        ("Double -infinity", .double(-.infinity)),
        ("Double NaN", .double(.nan)),
    ]

    static let strings: [(name: String, value: DefaultsValue)] = [
        ("String empty", .string("")),
        ("String ASCII", .string("hello, world")),
        ("String Latin accents", .string("héllo wörld ñ")),
        ("String decomposed (NFD stays NFD)", .string("cafe\u{301}")),
        ("String emoji ZWJ sequence", .string("👩‍👩‍👧‍👦 🏳️‍🌈")),
        ("String CJK", .string("設定を保存する")),
        ("String right-to-left", .string("مرحبا بالعالم")),
        ("String embedded NUL", .string("before\u{0}after")),
        ("String control characters", .string("tab\t newline\n return\r bell\u{7}")),
        ("String quotes and backslashes", .string(#"she said "hi" \ \\n {"a":1} '"#)),
        ("String that looks like a tag", .string("$data")),
        ("String surrogate-range scalar U+FFFD and U+10FFFF", .string("\u{FFFD}\u{10FFFF}")),
    ]

    static let dates: [(name: String, value: DefaultsValue)] = [
        ("Date reference date", .date(Date(timeIntervalSinceReferenceDate: 0))),
        ("Date 1970", .date(Date(timeIntervalSince1970: 0))),
        ("Date fractional", .date(Date(timeIntervalSinceReferenceDate: 1_234_567.890_123_456_7))),
        ("Date before 2001", .date(Date(timeIntervalSinceReferenceDate: -987_654_321.123))),
        ("Date.distantPast", .date(.distantPast)),
        ("Date.distantFuture", .date(.distantFuture)),
    ]

    static let containers: [(name: String, value: DefaultsValue)] = [
        ("Data empty", .data(Data())),
        ("Data one zero byte", .data(Data([0]))),
        ("Data every byte value", .data(Data((0...255).map { UInt8($0) }))),
        ("Array empty", .array([])),
        ("Array mixed scalars", .array([.int(1), .double(1), .bool(true), .string("1"), .data(Data([1])), .date(Date(timeIntervalSinceReferenceDate: 1))])),
        ("Array nested empties", .array([.array([]), .dictionary([:]), .array([.array([.array([])])])])),
        ("Dictionary empty", .dictionary([:])),
        ("Dictionary mixed", .dictionary(["int": .int(-7), "double": .double(-0.0), "nan": .double(.nan), "bool": .bool(false), "date": .date(.distantFuture)])),
        ("Dictionary with odd keys", .dictionary(["": .int(0), " ": .int(1), "$data": .string("x"), "a.b": .int(2), "ключ": .int(3), "\u{0}": .int(4)])),
        ("Dictionary nested", .dictionary(["a": .dictionary(["b": .array([.dictionary(["c": .int(1)])])])])),
        ("Nesting 64 levels", nested(depth: 64)),
        ("Dictionary 1000 entries", .dictionary(Dictionary(uniqueKeysWithValues: (0..<1000).map { ("k\($0)", DefaultsValue.int(Int64($0))) }))),
    ]

    static let large: [(name: String, value: DefaultsValue)] = [
        ("String 256 KiB", .string(String(repeating: "é∑🙂x", count: 65_536 / 4 * 4))),
        ("Data 2 MiB", .data(Data((0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }))),
    ]

    /// A value that nests `depth` arrays and dictionaries, alternating.
    public static func nested(depth: Int, leaf: DefaultsValue = .int(1)) -> DefaultsValue {
        var value = leaf
        for level in 0..<depth {
            value = level.isMultiple(of: 2) ? .array([value]) : .dictionary(["d": value])
        }
        return value
    }

    /// Values that differ only in type, which a provider must keep apart.
    static let lookalikes: [(name: String, value: DefaultsValue)] = [
        ("int 1", .int(1)), ("double 1", .double(1)), ("bool true", .bool(true)),
        ("int 0", .int(0)), ("double 0", .double(0)), ("bool false", .bool(false)),
        ("string \"1\"", .string("1")), ("data 0x31", .data(Data("1".utf8))), ("date 1", .date(Date(timeIntervalSinceReferenceDate: 1))),
        ("string \"true\"", .string("true")), ("array [int 1]", .array([.int(1)])), ("array [double 1]", .array([.double(1)])),
        ("array [bool true]", .array([.bool(true)])), ("dictionary {x: int 1}", .dictionary(["x": .int(1)])),
        ("dictionary {x: double 1}", .dictionary(["x": .double(1)])), ("dictionary {x: bool true}", .dictionary(["x": .bool(true)])),
        ("array [string \"1\"]", .array([.string("1")])), ("array [date 0]", .array([.date(Date(timeIntervalSinceReferenceDate: 0))])),
        ("array [double 0]", .array([.double(0)])),
    ]

    /// Keys a provider must store as given.
    static let keys: [(name: String, key: String)] = [
        ("single character", "a"),
        ("prefix 1", "ab"),
        ("prefix 2", "abc"),
        ("dotted prefix 1", "a.b"),
        ("dotted prefix 2", "a.b.c"),
        ("upper case differs from lower", "A"),
        ("space", " "),
        ("leading and trailing spaces", "  padded  "),
        ("tab and newline", "tab\tnew\nline"),
        ("NUL character", "nul\u{0}key"),
        ("SQL and glob wildcards", "%_*?[]'\";--"),
        ("path separators", "/etc/passwd\\..\\x"),
        ("dollar and braces", "${HOME}$data{}"),
        ("emoji", "🔑🗝️"),
        ("CJK", "キー"),
        ("right-to-left", "مفتاح"),
        ("Latin accents", "clé_ñ_ü"),
        ("1 KiB ASCII", String(repeating: "k", count: 1024)),
        ("1 KiB+1 ASCII", String(repeating: "k", count: 1025)),
        ("1 KiB of 3-byte characters", String(repeating: "€", count: 342)),
    ]
}
