import AnyDefaultsCore
import Foundation

/// The values the conformance suite stores: every edge case of the value model, each with a name
/// that failure messages use. Public so that tests of your own can reuse them.
public enum ConformanceValues {
    /// Every edge value, small ones first and the multi-megabyte ones last.
    public static let edgeCases: [(name: String, value: DefaultsValue)] = scalars + strings + dates + containers + large

    /// Strings a provider must keep scalar for scalar: no normalization (NFC, NFD, NFKC), no
    /// trimming, no newline conversion, no byte-order mark or zero-width character dropped.
    public static let exactStrings: [(name: String, value: DefaultsValue)] = [
        ("NFC é", .string("caf\u{E9}")),
        ("NFD e + combining acute", .string("cafe\u{301}")),
        ("Hangul as conjoining jamo (NFD)", .string("\u{1100}\u{1161}\u{11A8}")),
        ("Hangul precomposed (NFC)", .string("\u{AC01}")),
        ("Angstrom sign (a canonical singleton)", .string("\u{212B}")),
        ("Ohm sign (a canonical singleton)", .string("\u{2126}")),
        ("ligature fi (compatibility)", .string("\u{FB01}le")),
        ("full-width letters (compatibility)", .string("\u{FF21}\u{FF22}")),
        ("superscript two (compatibility)", .string("x\u{B2}")),
        ("leading and trailing spaces", .string("  padded  ")),
        ("only spaces", .string("   ")),
        ("trailing newline", .string("line\n")),
        ("CRLF", .string("a\r\nb")),
        ("lone CR", .string("a\rb")),
        ("tab at both ends", .string("\tx\t")),
        ("no-break space at both ends", .string("\u{A0}x\u{A0}")),
        ("byte-order mark first", .string("\u{FEFF}bom")),
        ("zero-width space and joiner", .string("a\u{200B}b\u{200D}c")),
        ("lone combining mark", .string("\u{301}")),
        ("several combining marks in a non-canonical order", .string("a\u{301}\u{316}")),
        ("variation selector", .string("\u{270C}\u{FE0F}")),
        ("line and paragraph separators", .string("a\u{2028}b\u{2029}c")),
        ("NUL only", .string("\u{0}")),
        ("DEL and C1 controls", .string("\u{7F}\u{80}\u{9F}")),
        ("noncharacters", .string("\u{FFFE}\u{FFFF}\u{10FFFF}")),
        ("private use", .string("\u{E000}\u{F8FF}")),
        ("unpaired-looking high scalar U+D7FF", .string("\u{D7FF}")),
        ("dictionary keys in NFD and with spaces", .dictionary(["cafe\u{301}": .int(1), " k ": .int(2), "\u{212B}": .int(3)])),
        ("NFD strings inside an array", .array([.string("e\u{301}"), .string(" x "), .string("\u{FB01}")])),
    ]

    /// Every scalar edge value inside containers: an array of them all, a dictionary of them all,
    /// each three levels deep, and arrays of the doubles whose last digit or sign a lossy codec
    /// loses only when they are nested.
    public static let nestedExtremes: [(name: String, value: DefaultsValue)] = {
        let edges = scalars + dates + [("Data every byte value", DefaultsValue.data(Data((0...255).map { UInt8($0) })))]
        var items: [(name: String, value: DefaultsValue)] = [
            ("array of every scalar edge value", .array(edges.map(\.value))),
            ("dictionary of every scalar edge value", .dictionary(Dictionary(uniqueKeysWithValues: edges.map { ($0.name, $0.value) }))),
            ("array of -0.0 and 0.0", .array([.double(-0.0), .double(0.0), .double(-0.0)])),
            ("doubles needing 17 significant digits", .array(seventeenDigitDoubles.map { .double($0) })),
            ("Int64 extremes in a dictionary", .dictionary(["min": .int(.min), "max": .int(.max), "2^53+1": .int(9_007_199_254_740_993)])),
            ("dates with fractions and far away, in an array", .array(farDates.map { .date($0) })),
            ("infinities and NaN in an array", .array([.double(.infinity), .double(-.infinity), .double(.nan), .date(Date(timeIntervalSinceReferenceDate: .infinity))])),
        ]
        for (name, value) in edges {
            items.append(("\(name), three levels deep", .dictionary(["a": .array([.dictionary(["b": value])])])))
        }
        return items
    }()

    /// Doubles whose shortest exact decimal form has 17 significant digits, and a few more that
    /// printing with fewer digits changes.
    static let seventeenDigitDoubles: [Double] = [
        0.1 + 0.2, 1.0 / 3.0, 2.0 / 3.0, .pi, .ulpOfOne, 1 + .ulpOfOne, 123_456_789.123_456_78, -9.876_543_210_987_654e-200,
        .leastNonzeroMagnitude, 1.797_693_134_862_315_7e308, 4_503_599_627_370_497.5,
    ]

    /// Dates a lossy codec rounds or clamps: fractions below a microsecond, -0.0, far past and future.
    static let farDates: [Date] = [
        Date(timeIntervalSinceReferenceDate: 0.000_000_1), Date(timeIntervalSinceReferenceDate: -0.0),
        Date(timeIntervalSinceReferenceDate: 1e15 + 0.5), Date(timeIntervalSinceReferenceDate: -1e15 - 0.25),
        Date(timeIntervalSinceReferenceDate: 1.0 / 3.0), Date(timeIntervalSince1970: 1_700_000_000.123_456_7),
    ]

    /// Values that look like the tags of the built-in codecs, or like whole encodings: a
    /// provider must read each back as it was written, not as what it looks like.
    public static let tagLike: [(name: String, value: DefaultsValue)] = [
        ("{\"$data\": base64 text}", .dictionary(["$data": .string("AAEC")])),
        ("{\"$date\": a number}", .dictionary(["$date": .double(0)])),
        ("{\"$date\": ISO 8601 text}", .dictionary(["$date": .string("2024-05-01T12:00:00Z")])),
        ("{\"$double\": \"nan\"}", .dictionary(["$double": .string("nan")])),
        ("{\"$double\": \"-inf\"}", .dictionary(["$double": .string("-inf")])),
        ("{\"$dict\": {\"$id\": 7}}", .dictionary(["$dict": .dictionary(["$id": .int(7)])])),
        ("{\"$dict\": 1}", .dictionary(["$dict": .int(1)])),
        ("{\"$\": 1}", .dictionary(["$": .int(1)])),
        ("{\"$unknown\": true}", .dictionary(["$unknown": .bool(true)])),
        ("{\"$data\": data}", .dictionary(["$data": .data(Data([0, 1, 2]))])),
        ("two members, one a tag", .dictionary(["$data": .string("AAEC"), "other": .int(1)])),
        ("tags nested in an array", .array([.dictionary(["$date": .double(1)]), .dictionary(["$data": .string("")])])),
        ("{\"CF$UID\": 1} (a property-list UID)", .dictionary(["CF$UID": .int(1)])),
        ("keyed-archive look-alike", .dictionary(["$archiver": .string("NSKeyedArchiver"), "$objects": .array([.string("$null")]), "$top": .dictionary(["root": .dictionary(["CF$UID": .int(1)])]), "$version": .int(100_000)])),
        ("{\"NS.time\": 0}", .dictionary(["NS.time": .double(0)])),
        ("string with JSON of a tag", .string(#"{"$date": 0}"#)),
        ("string with an XML property list", .string("<?xml version=\"1.0\"?><plist><true/></plist>")),
        ("string that is an ISO 8601 date", .string("2001-01-01T00:00:00Z")),
        ("string \"nan\"", .string("nan")),
        ("string \"null\"", .string("null")),
        ("data that is a binary property list header", .data(Data("bplist00".utf8))),
        ("data that is JSON of a tag", .data(Data(#"{"$data":"AA=="}"#.utf8))),
        ("data that looks like an encoded array", .data(Data([0x07, 0x01, 0x02, 0x02]))),
        ("data that looks like an encoded bool", .data(Data([0x01]))),
        ("data of one NUL", .data(Data([0x00]))),
    ]

    /// The large values: strings and data of megabytes, and containers with more items than a
    /// 16-bit count holds.
    static let largeContainers: [(name: String, value: DefaultsValue)] = [
        ("array of 70 000 mixed items", .array((0..<70_000).map { index -> DefaultsValue in
            switch index % 4 {
            case 0: .int(Int64(index) &* 2_654_435_761)
            case 1: .double(Double(index) / 7)
            case 2: .string("s\(index)")
            default: .bool(index % 8 == 3)
            }
        })),
        ("dictionary of 70 000 entries", .dictionary(Dictionary(uniqueKeysWithValues: (0..<70_000).map { ("k\($0)", DefaultsValue.int(Int64($0))) }))),
    ]

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

    /// Sets of keys that are different keys, though a provider that folds, normalizes beyond
    /// NFC, strips, unescapes, trims or cuts at a NUL would merge them. Each set is written with
    /// a distinct value per key.
    static let distinctKeys: [(id: ConformanceCheck, name: String, keys: [String])] = [
        (.keysCompatibilityDistinct, "ligature fi", ["cmp.\u{FB01}le", "cmp.file"]),
        (.keysCompatibilityDistinct, "superscript two", ["cmp.x\u{B2}", "cmp.x2"]),
        (.keysCompatibilityDistinct, "full-width A", ["cmp.\u{FF21}", "cmp.A"]),
        (.keysCompatibilityDistinct, "circled one", ["cmp.\u{2460}", "cmp.1"]),
        (.keysCompatibilityDistinct, "Roman numeral nine", ["cmp.\u{2168}", "cmp.IX"]),
        (.keysCompatibilityDistinct, "half-width katakana", ["cmp.\u{FF76}", "cmp.\u{30AB}"]),
        (.keysCaseDistinct, "ASCII case", ["case.Key", "case.key", "case.KEY"]),
        (.keysCaseDistinct, "accented capital", ["case.\u{C9}t\u{E9}", "case.\u{E9}t\u{E9}"]),
        (.keysCaseDistinct, "sharp s", ["case.stra\u{DF}e", "case.strasse", "case.STRASSE", "case.stra\u{1E9E}e"]),
        (.keysCaseDistinct, "Greek sigma", ["case.\u{3A3}", "case.\u{3C3}", "case.\u{3C2}"]),
        (.keysCaseDistinct, "Turkish i", ["case.\u{130}", "case.i", "case.I", "case.\u{131}"]),
        (.keysCaseDistinct, "Cyrillic", ["case.\u{41A}\u{43B}\u{44E}\u{447}", "case.\u{43A}\u{43B}\u{44E}\u{447}"]),
        (.keysAccentDistinct, "acute accents", ["acc.resume", "acc.r\u{E9}sum\u{E9}", "acc.r\u{E9}sume"]),
        (.keysAccentDistinct, "umlaut", ["acc.uber", "acc.\u{FC}ber"]),
        (.keysAccentDistinct, "ring above", ["acc.Angstrom", "acc.\u{C5}ngstr\u{F6}m"]),
        (.keysAccentDistinct, "combining mark only", ["acc.o", "acc.o\u{308}", "acc.o\u{303}"]),
        (.keysEscapeDistinct, "percent-encoded slash", ["a/b", "a%2Fb", "a%2fb"]),
        (.keysEscapeDistinct, "percent-encoded dot and percent", ["esc.a.b", "esc.a%2Eb", "esc.%", "esc.%25"]),
        (.keysEscapeDistinct, "space, plus and %20", ["esc.a b", "esc.a+b", "esc.a%20b"]),
        (.keysEscapeDistinct, "HTML entity", ["esc.&", "esc.&amp;"]),
        (.keysEscapeDistinct, "backslash escapes", ["esc.A", "esc.\\u0041", "esc.\\x41", "esc.\\", "esc.\\\\"]),
        (.keysEscapeDistinct, "quotes", ["esc.\"q\"", "esc.\\\"q\\\"", "esc.'q'"]),
        (.keysEscapeDistinct, "dots as path", ["esc.x", "esc..x", "esc.x.", "esc/x"]),
        (.keysWhitespaceDistinct, "surrounding spaces", ["ws.padded", " ws.padded", "ws.padded ", "  ws.padded  "]),
        (.keysWhitespaceDistinct, "tabs and newlines at the ends", ["\tws.tab", "ws.tab", "ws.tab\n", "ws.tab\r\n"]),
        (.keysWhitespaceDistinct, "invisible characters", ["ws.zw", "\u{200B}ws.zw", "\u{FEFF}ws.zw", "ws.zw\u{A0}"]),
        (.keysWhitespaceDistinct, "a NUL and what follows it", ["nul.key", "nul.key\u{0}", "nul.key\u{0}x", "nul.key\u{0}y"]),
    ]

    /// Sets of spellings of one key: canonically equivalent (NFC and NFD, canonical singletons,
    /// combining marks in either order, Hangul syllables and jamo).
    static let canonicalKeys: [[String]] = [
        ["caf\u{E9}", "cafe\u{301}"],
        ["\u{C5}", "\u{212B}", "A\u{30A}"],
        ["\u{3A9}", "\u{2126}"],
        ["K", "\u{212A}"],
        ["\u{1E0D}\u{307}", "d\u{323}\u{307}", "d\u{307}\u{323}"],
        ["\u{AC00}", "\u{1100}\u{1161}"],
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
        ("a dot", "."),
        ("two dots", ".."),
        ("a tilde", "~"),
        ("an option-like dash", "-rf"),
        ("a reserved device name", "CON"),
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
