import AnyDefaults
import Foundation
import TestSupport
import Testing

/// `write KEY -int 5` and the other type flags of macOS `defaults write`, run as the built
/// executable.
@Suite(.ownThreads) struct TypeFlagTests {
    /// Each flag, on every persistent backend, read back with its type.
    @Test(arguments: StoreKind.persistent)
    func eachFlagStoresItsType(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind.store(cli)
            let date = DefaultsValue.date(Date(timeIntervalSince1970: 1_795_253_400))  // 2026-11-21T09:30:00Z
            let cases: [(words: [String], stored: DefaultsValue)] = [
                (["-int", "5"], .int(5)),
                (["-integer", "-9223372036854775808"], .int(.min)),
                (["-float", "0.5"], .double(0.5)),
                (["-double", "2"], .double(2)),
                (["-float", "-inf"], .double(-.infinity)),
                (["-bool", "YES"], .bool(true)),
                (["-boolean", "false"], .bool(false)),
                (["-string", "5"], .string("5")),
                // After -string every word is the value, a flag's name included.
                (["-string", "-int"], .string("-int")),
                (["-date", "2026-11-21 09:30:00 +0000"], date),
                (["-date", "2026-11-21T10:30:00+01:00"], date),
                (["-data", "0aff"], .data(Data([0x0A, 0xFF]))),
                // As macOS prints data: angle brackets, spaces.
                (["-data", "<0a ff 00>"], .data(Data([0x0A, 0xFF, 0x00]))),
                (["-data", ""], .data(Data())),
                (["-array", "a", "5", "-string", "-int"], .array([.string("a"), .string("5"), .string("-int")])),
                // A scalar flag before an element types it, as in macOS `defaults`.
                (["-array", "-int", "5", "5", "-bool", "YES", "-float", "0.5", "-data", "0aff", "-date", "2026-11-21 09:30:00 +0000"],
                 .array([.int(5), .string("5"), .bool(true), .double(0.5), .data(Data([0x0A, 0xFF])), date])),
                (["-dict", "width", "-int", "1280", "name", "main", "on", "-bool", "NO", "-int", "-string", "x"],
                 .dictionary(["width": .int(1280), "name": .string("main"), "on": .bool(false), "-int": .string("x")])),
                (["-array"], .array([])),
                (["-dict", "width", "1280", "name", "main"], .dictionary(["width": .string("1280"), "name": .string("main")])),
                (["-dict"], .dictionary([:])),
            ]
            var expected: [String: DefaultsValue] = [:]
            for (index, item) in cases.enumerated() {
                try cli.succeed(["--store", store, "write", "k\(index)"] + item.words)
                expected["k\(index)"] = item.stored
            }
            // `export` reads every value with its exact type (int 5 is not double 5 nor "5").
            #expect(try cli.contents(of: store) == expected)
            // And `read-type` names it, as macOS `defaults read-type` does.
            for (key, value) in expected {
                #expect(try cli.succeed(["--store", store, "read-type", key]).standardOutput == value.typeName + "\n", "\(key)")
            }
            let absent = try cli.run(["--store", store, "read-type", "absent"])
            #expect(absent.status == 1)
            #expect(absent.standardError.contains(#"no value for the key "absent""#), "\(absent.standardError)")
        }
    }

    /// Words that are not a valid value for their flag exit 64 with a message naming the flag,
    /// store nothing, and do not even create the store.
    @Test func aValueThatDoesNotFitItsFlagIsAUsageErrorAndStoresNothing() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            let cases: [(words: [String], message: String)] = [
                (["-int", "five"], "The value after -int is not valid: expected a whole number"),
                (["-int", "9223372036854775808"], "The value after -int is not valid"),
                (["-int"], "-int needs a value."),
                (["-int", "1", "2"], "-int takes one value (quote a value with spaces)."),
                (["-float", "1e999"], "The value after -float is not valid: expected a number within the range of a double"),
                (["-bool", "maybe"], "The value after -bool is not valid: expected a boolean"),
                (["-float", "-nan"], "The value after -float is not valid: expected a number (or nan, inf, -inf)"),
                (["-date", "yesterday"], "The value after -date is not valid: expected an ISO 8601 date"),
                // Dates that Foundation's parsers roll over or complete are refused, not changed.
                (["-date", "2026-02-30T00:00:00Z"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21T25:00:00Z"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21T23:59:60Z"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21T09:30:00"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21 09:30:00Z"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21 09:30:00"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21 09:30:00 +9999"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-date", "2026-11-21T09:30:00+99:99"], "The value after -date is not valid: expected an ISO 8601 date"),
                (["-data", "0g"], "The value after -data is not valid: expected hexadecimal bytes"),
                (["-data", "abc"], "The value after -data is not valid: expected hexadecimal bytes"),
                (["-dict", "a"], "-dict takes KEY VALUE pairs; 1 words were given."),
                (["-dict", "a", "-int"], "-int inside -dict needs a value"),
                (["-array", "a", "-int"], "-int inside -array needs a value (-string -int for the word itself)."),
                (["-array", "-int", "x"], "The value after -int is not valid: expected a whole number"),
                (["-array", "-array", "x"], "-array cannot hold -array: for arrays or dictionaries inside others use --type json."),
                (["-dict", "a", "-dict"], "-dict cannot hold -dict"),
                (["-dict", "a", "-int", "1", "a", "-int", "2"], #"-dict names the key "a" twice"#),
                (["-dict", "caf\u{E9}", "1", "cafe\u{301}", "2"], "-dict names the key"),
                (["-int", "5", "--type", "int"], "Give the type once: -int or --type, not both."),
                (["-long", "5"], "Unknown type flag -long: use one of -string -int -integer -float -double -bool -boolean -date -data -array -dict -array-add -dict-add, or --type TYPE."),
                (["-Int", "5"], "Unknown type flag -Int"),
            ]
            for item in cases {
                let result = try cli.run(["--store", store, "write", "k"] + item.words)
                #expect(result.status == 64, "\(item.words): \(result.standardError)")
                #expect(result.standardError.contains(item.message), "\(item.words): \(result.standardError)")
                #expect(!FileManager.default.fileExists(atPath: cli.path("store.json")), "\(item.words) created the store")
            }
        }
    }

    /// `--` ends the flags: what follows is one value, as `--type` reads it.
    @Test func aDoubleDashMakesAFlagAValue() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            try cli.succeed(["--store", store, "write", "a", "--", "-int"])
            try cli.succeed(["--store", store, "write", "b", "-5", "--type", "int"])
            try cli.succeed(["--store", store, "write", "c", "-inf", "--type", "double"])
            try cli.succeed(["--store", store, "write", "d", "-Data"])
            let twoWords = try cli.run(["--store", store, "write", "e", "--", "-int", "5"])
            #expect(twoWords.status == 64)
            #expect(twoWords.standardError.contains("Give exactly one VALUE"), "\(twoWords.standardError)")
            #expect(try cli.contents(of: store) == ["a": .string("-int"), "b": .int(-5), "c": .double(-.infinity), "d": .string("-Data")])
        }
    }

    /// Generated numbers and bytes (seed printed) read back exactly through -int, -float, -data.
    @Test func generatedValuesReadBackExactly() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("TypeFlagTests.generatedValuesReadBackExactly seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            var expected: [String: DefaultsValue] = [:]
            for index in 0..<6 {
                let integer = Int64.random(in: .min ... .max, using: &random)
                try cli.succeed(["--store", store, "write", "int\(index)", "-int", String(integer)])
                expected["int\(index)"] = .int(integer)
                // Any finite double, written as Swift prints it (the shortest text that reads back exactly).
                let double = Double(bitPattern: random.next())
                let finite = double.isFinite ? double : Double(Int32.random(in: .min ... .max, using: &random))
                try cli.succeed(["--store", store, "write", "double\(index)", "-float", "\(finite)"])
                expected["double\(index)"] = .double(finite)
                let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                let text = Bool.random(using: &random) ? hex.joined() : "<" + hex.joined(separator: " ").uppercased() + ">"
                try cli.succeed(["--store", store, "write", "data\(index)", "-data", text])
                expected["data\(index)"] = .data(Data(bytes))
            }
            #expect(try cli.contents(of: store) == expected, "seed \(seed)")
        }
    }

    /// A date written as text reads back as that very text, as the `{"$date": ...}` form does:
    /// years before the Gregorian reform (not shifted as Julian dates), the first and last
    /// years, fractions to the digit (`.123` is not `.1229999`), and the macOS spelling of the
    /// same moment. Random moments too, each written in each spelling.
    @Test func aDateReadsBackExactlyAsWritten() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            var texts = [
                "1000-06-15T00:00:00Z", "0001-01-01T00:00:00Z", "1582-10-04T23:59:59Z", "1582-10-15T00:00:00Z",
                "2026-11-21T09:30:00.123Z", "2026-11-21T09:30:00.1Z", "2026-11-21T09:30:00.9999Z", "9999-12-31T23:59:59.999Z",
                "2000-02-29T12:00:00Z",
            ]
            var random = SeededGenerator(seed: 1582)
            for _ in 0..<8 {
                func field(_ range: Range<Int>, _ width: Int) -> String {
                    let number = String(Int.random(in: range, using: &random))
                    return String(repeating: "0", count: max(0, width - number.count)) + number
                }
                texts.append(
                    "\(field(1..<10000, 4))-\(field(1..<13, 2))-\(field(1..<29, 2))T\(field(0..<24, 2)):\(field(0..<60, 2)):"
                        + "\(field(0..<60, 2)).\(field(0..<100, 2))\(field(1..<10, 1))Z")  // no trailing 0: read prints the shortest text
            }
            for (index, text) in texts.enumerated() {
                try cli.succeed(["--store", store, "write", "tagged\(index)", "--type", "json", #"{"$date": ""# + text + #""}"#])
                try cli.succeed(["--store", store, "write", "typed\(index)", text, "--type", "date"])
                try cli.succeed(["--store", store, "write", "flag\(index)", "-date", text])
                let read = try cli.succeed(["--store", store, "read", "typed\(index)"]).standardOutput
                #expect(read.contains(text), "\(text) read back as \(read)")
            }
            let stored = try cli.contents(of: store)
            for index in texts.indices {
                #expect(stored["typed\(index)"] != nil && stored["typed\(index)"] == stored["tagged\(index)"], "\(texts[index])")
                #expect(stored["flag\(index)"] == stored["tagged\(index)"], "\(texts[index])")
            }
            // The date alone is midnight UTC; the macOS spelling is the same moment as ISO 8601.
            try cli.succeed(["--store", store, "write", "day", "1000-06-15", "--type", "date"])
            try cli.succeed(["--store", store, "write", "mac", "-date", "1000-06-15 01:30:00 +0130"])
            #expect(try cli.contents(of: store)["day"] == stored["tagged0"])
            #expect(try cli.contents(of: store)["mac"] == stored["tagged0"])
        }
    }
}
