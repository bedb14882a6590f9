import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Input the tool must refuse rather than change: numbers no double can hold, property lists that
/// name a key twice, names that are not UTF-8 or too long to write.
@Suite(.ownThreads) struct InputValidationTests {
    // MARK: Numbers

    static let outOfRange = [
        "1e400", "-1e400", "1e999", "1E+309", "1" + String(repeating: "0", count: 310) + ".0", "1e-400", "-1e-400", "2e-324",
        "0." + String(repeating: "0", count: 330) + "1",
    ]
    static let inRange: [(String, Double)] = [
        ("0.0", 0), ("-0.0", -0.0), ("0e-400", 0), ("4.9e-324", .leastNonzeroMagnitude), ("1.7976931348623157e308", .greatestFiniteMagnitude), ("2.5e-324", .leastNonzeroMagnitude),
    ]

    /// Every JSON input the tool reads: an import file (top level, nested, in a tag), a
    /// `write --type json` value, and a JSON store file edited by hand.
    @Test(arguments: outOfRange)
    func aNumberNoDoubleCanHoldIsRefusedInEveryJSONInput(_ literal: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["keep": .int(1)])
            let documents = [
                "{\"k\": \(literal)}", "{\"k\": [1, \(literal)]}", "{\"k\": {\"inner\": \(literal)}}",
                "{\"k\": {\"$double\": \(literal)}}", "{\"k\": {\"$date\": \(literal)}}",
            ]
            for (index, document) in documents.enumerated() {
                try document.write(toFile: cli.path("in\(index).json"), atomically: true, encoding: .utf8)
                let imported = try cli.run(["--store", cli.json(), "import", cli.path("in\(index).json")])
                #expect(imported.status == 65, "\(document): \(imported.standardError)")
                #expect(imported.standardError.contains("double"), "\(imported.standardError)")
                // A JSON store file holding it does not open as something else.
                let read = try cli.run(["--store", "json:" + cli.path("in\(index).json"), "read"])
                #expect(read.status == 74, "\(document): \(read.standardError)")
            }
            for value in [literal, "[\(literal)]", "{\"a\": \(literal)}", "{\"$double\": \(literal)}"] {
                let written = try cli.run(["--store", cli.json(), "write", "k", value, "--type", "json"])
                #expect(written.status == 64, "\(value): \(written.standardError)")
            }
            let double = try cli.run(["--store", cli.json(), "write", "k", "--type", "double", "--", literal])
            #expect(double.status == 64, "\(double.standardError)")
            #expect(try cli.contents(of: cli.json()) == ["keep": .int(1)])
        }
    }

    @Test func numbersADoubleHoldsAreRead() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            for (literal, value) in Self.inRange {
                try cli.succeed(["--store", cli.json(), "write", "k", literal, "--type", "json"])
                #expect(try cli.contents(of: cli.json())["k"] == .double(value), "\(literal)")
                try cli.succeed(["--store", cli.json(), "write", "k", "--type", "double", "--", literal])
                #expect(try cli.contents(of: cli.json())["k"] == .double(value), "\(literal)")
            }
        }
    }

    // MARK: Property lists

    /// A binary property list of `values` whose second key is then renamed to the first: two
    /// equal keys in one dictionary, which no writer of this library produces.
    static func binaryListWithDuplicate(nested: Bool) -> Data {
        let inner: [String: DefaultsValue] = ["ka": .int(1), "kb": .int(2)]
        var bytes = [UInt8](ExactPropertyList.data(from: nested ? ["outer": .dictionary(inner)] : inner))
        // ASCII strings are 0x5N then the bytes: "kb" becomes "ka".
        let pattern: [UInt8] = [0x52, UInt8(ascii: "k"), UInt8(ascii: "b")]
        if let start = (0...(bytes.count - pattern.count)).first(where: { Array(bytes[$0..<$0 + 3]) == pattern }) {
            bytes[start + 2] = UInt8(ascii: "a")
        }
        return Data(bytes)
    }

    static let duplicateLists: [(name: String, data: @Sendable () -> Data)] = [
        ("binary, top level", { binaryListWithDuplicate(nested: false) }),
        ("binary, in a value", { binaryListWithDuplicate(nested: true) }),
        ("XML, the same key twice", { Data(xml("<key>a</key><integer>1</integer><key>a</key><integer>2</integer>").utf8) }),
        ("XML, in a value", { Data(xml("<key>o</key><dict><key>a</key><true/><key>a</key><false/></dict>").utf8) }),
        ("XML, NFC and NFD spellings", { Data(xml("<key>caf\u{E9}</key><integer>1</integer><key>cafe\u{301}</key><integer>2</integer>").utf8) }),
        ("XML, an empty key twice", { Data(xml("<key/><integer>1</integer><key></key><integer>2</integer>").utf8) }),
        ("OpenStep, the same key twice", { Data(#"{ a = 1; /* b = 2; */ "a" = "x=y"; }"#.utf8) }),
        ("OpenStep, in a value", { Data(#"{ o = { a = 1; 'a' = 2; }; // c = 3;\#n}"#.utf8) }),
        ("OpenStep, NFC and NFD spellings", { Data("{ \"caf\u{E9}\" = 1; \"cafe\u{301}\" = 2; }".utf8) }),
        ("strings file, the same key twice", { Data(#""a" = "1"; "a" = "2";"#.utf8) }),
    ]

    static func xml(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict><!-- <key>a</key> in a comment does not count -->\(body)</dict></plist>
        """
    }

    @Test func aPropertyListThatNamesAKeyTwiceIsRefusedAsJSONIs() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["keep": .int(1)])
            // The same in JSON, for comparison.
            try #"{"a": 1, "a": 2}"#.write(toFile: cli.path("dup.json"), atomically: true, encoding: .utf8)
            #expect(try cli.run(["--store", cli.json(), "import", cli.path("dup.json")]).status == 65)
            for (name, data) in Self.duplicateLists {
                try data().write(to: URL(fileURLWithPath: cli.path("dup.plist")))
                // OpenStep text starts like JSON: it is read as a property list when `--format` says so.
                let format = name.hasPrefix("OpenStep") || name.hasPrefix("strings") ? ["--format", "plist"] : []
                let result = try cli.run(["--store", cli.json(), "import"] + format + [cli.path("dup.plist")])
                #expect(result.status == 65, "\(name): \(result.standardError)")
                #expect(result.standardError.contains("more than once"), "\(name): \(result.standardError)")
            }
            #expect(try cli.contents(of: cli.json()) == ["keep": .int(1)])
            // Without the duplicate, the same lists import.
            try Data(Self.xml("<key>a</key><integer>1</integer><key>b</key><dict><key>a</key><true/></dict>").utf8)
                .write(to: URL(fileURLWithPath: cli.path("fine.plist")))
            try cli.succeed(["--store", cli.json(), "import", cli.path("fine.plist")])
            #expect(try cli.contents(of: cli.json()) == ["keep": .int(1), "a": .int(1), "b": .dictionary(["a": .bool(true)])])
            // OpenStep: an `=` in a quoted string (also after an escaped quote) or a comment is no key.
            try Data(#"{ c = "x = \" = y"; /* c = 2; */ d = { e = 'f=g'; }; // d = 1;\#n}"#.utf8)
                .write(to: URL(fileURLWithPath: cli.path("fine-openstep.plist")))
            try cli.succeed(["--store", cli.json(), "import", "--format", "plist", cli.path("fine-openstep.plist")])
            #expect(try cli.contents(of: cli.json())["d"] == .dictionary(["e": .string("f=g")]))
            #expect(try cli.contents(of: cli.json())["c"] == .string(#"x = " = y"#))
        }
    }

    /// The dates and reals of an XML property list are read as strictly as the JSON forms:
    /// Foundation's parser would roll `02-30` over to March, read an hour 25 as the next day and
    /// `1e400` as infinity; an import refuses them (65) and stores nothing. Spelled infinities
    /// and valid dates of any year import exactly.
    @Test func aPropertyListDateOrRealOutOfRangeIsRefusedAsJSONIs() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["keep": .int(1)])
            let refused: [(body: String, message: String)] = [
                ("<key>d</key><date>2026-02-30T00:00:00Z</date>", "<date>"),
                ("<key>d</key><date>2026-11-21T25:00:00Z</date>", "<date>"),
                ("<key>d</key><date>2026-11-21T09:30:00</date>", "cannot parse"),  // Foundation refuses this one itself
                ("<key>o</key><dict><key>d</key><date>1900-02-29T00:00:00Z</date></dict>", "<date>"),
                ("<key>r</key><real>1e400</real>", "<real>"),
                ("<key>r</key><array><real>-1e999</real></array>", "<real>"),
            ]
            for item in refused {
                try Data(Self.xml(item.body).utf8).write(to: URL(fileURLWithPath: cli.path("bad.plist")))
                let result = try cli.run(["--store", cli.json(), "import", cli.path("bad.plist")])
                #expect(result.status == 65, "\(item.body): \(result.standardError)")
                #expect(result.standardError.contains(item.message), "\(item.body): \(result.standardError)")
            }
            #expect(try cli.contents(of: cli.json()) == ["keep": .int(1)])
            let body = """
                <key>old</key><date>1000-06-15T00:00:00Z</date><key>leap</key><date>2000-02-29T12:00:00Z</date>\
                <key>inf</key><real>+infinity</real><key>big</key><real>1.7976931348623157e308</real>\
                <!-- <date>2026-02-30T00:00:00Z</date> in a comment is no date -->
                """
            try Data(Self.xml(body).utf8).write(to: URL(fileURLWithPath: cli.path("fine.plist")))
            try cli.succeed(["--store", cli.json(), "import", cli.path("fine.plist")])
            try cli.succeed(["--store", cli.json(), "write", "old2", "--type", "json", #"{"$date": "1000-06-15T00:00:00Z"}"#])
            let stored = try cli.contents(of: cli.json())
            #expect(stored["old"] != nil && stored["old"] == stored["old2"])
            #expect(stored["inf"] == .double(.infinity))
            #expect(stored["big"] == .double(.greatestFiniteMagnitude))
        }
    }

    // MARK: Names

    /// Arguments and environment variables that are not UTF-8 are refused before anything is
    /// opened; nothing is created under a name with U+FFFD in it.
    @Test func namesThatAreNotUTF8AreRefused() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let bad = #"$(printf 'bad\377name')"#
            let scripts = [
                #""$ANYDEFAULTS" --store "json:$D/\#(bad).json" write k v"#,
                #""$ANYDEFAULTS" --store "json:$D/s.json" write "\#(bad)" v"#,
                #""$ANYDEFAULTS" --store "json:$D/s.json" read "\#(bad)""#,
                #""$ANYDEFAULTS" --store "json:$D/s.json" delete "\#(bad)""#,
                #""$ANYDEFAULTS" --store "json:$D/s.json" export --output "$D/\#(bad).json""#,
                #""$ANYDEFAULTS" --store "userdefaults:\#(bad)" write k v"#,
                #"ANYDEFAULTS_STORE="json:$D/\#(bad).json" "$ANYDEFAULTS" write k v"#,
                #"XDG_CONFIG_HOME="$D/\#(bad)" "$ANYDEFAULTS" --store userdefaults:s write k v"#,
                #"HOME="$D/\#(bad)" XDG_CONFIG_HOME= "$ANYDEFAULTS" --store userdefaults:s write k v"#,
                #"XDG_DATA_HOME="$D/\#(bad)" "$ANYDEFAULTS" write k v"#,
            ]
            for script in scripts {
                let result = try cli.runShell("D='\(directory.path)'; " + script)
                #expect(result.status == 64, "\(script): \(result.standardError)")
                #expect(result.standardError.contains("not valid UTF-8"), "\(script): \(result.standardError)")
                #expect(!result.standardError.contains("\u{FFFD}"))
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("name") }
            #expect(left.isEmpty, "\(left)")
        }
    }

    /// A store name that fits the file system but leaves no room for the files written beside it
    /// is refused when the store is opened (every command), not by every write.
    @Test func aNameTooLongForItsSidecarsIsRefusedOnOpening() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let long = String(repeating: "n", count: 240)
            let suite = String(repeating: "s", count: 240)
            let stores = [
                (store: "json:" + cli.path(long + ".json"), file: cli.path(long + ".json"), empty: "{}"),
                (store: "userdefaults:" + suite, file: cli.path("config/\(suite).plist"), empty: Self.xml("")),
            ]
            for (store, file, empty) in stores {
                // Absent, a reading command finds no such store (and creates none); writing is refused.
                for command in [["read"], ["keys"]] {
                    let result = try cli.run(["--store", store] + command)
                    #expect(result.status == 66, "\(command): \(result.standardError)")
                    #expect(!FileManager.default.fileExists(atPath: file))
                }
                let write = try cli.run(["--store", store, "write", "k", "v"])
                #expect(write.status == 64, "\(write.standardError)")
                #expect(write.standardError.contains("too long"), "\(write.standardError)")
                // Made by another program, it is refused by the reading commands when opened.
                try Data(empty.utf8).write(to: URL(fileURLWithPath: file))
                for command in [["read"], ["keys"], ["write", "k", "v"]] {
                    let result = try cli.run(["--store", store] + command)
                    #expect(result.status == 64, "\(command): \(result.standardError)")
                    #expect(result.standardError.contains("too long"), "\(result.standardError)")
                }
            }
            // An output name with no room for its temporary file.
            let output = try cli.run(["--store", "memory:", "export", "--output", cli.path(String(repeating: "o", count: 250))])
            #expect(output.status == 73, "\(output.standardError)")
            #expect(output.standardError.contains("name"), "\(output.standardError)")
            // A long name that leaves room works.
            try cli.succeed(["--store", "json:" + cli.path(String(repeating: "n", count: 200) + ".json"), "write", "k", "v"])
        }
    }
}
