import AnyDefaults
import AnyDefaultsTesting
import Foundation
import TestSupport
import Testing

/// `export` and `import`, and `migrate`: exact round trips between backends.
@Suite(.ownThreads) struct ExportImportTests {
    /// Every edge value, under its name as the key.
    static let edgeStore = Dictionary(uniqueKeysWithValues: ConformanceValues.edgeCases.map { ($0.name, $0.value) })

    /// The first few keys whose values differ, for a readable failure.
    static func differences(_ actual: [String: DefaultsValue], _ expected: [String: DefaultsValue]) -> [String] {
        Set(actual.keys).union(expected.keys).filter { actual[$0] != expected[$0] }.sorted().prefix(5).map { $0 }
    }

    @Test(arguments: ["json", "plist"])
    func everyEdgeValueRoundTripsAcrossBackends(_ format: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let json = cli.json()
            let suite = cli.suite()
            try cli.fill(json, with: Self.edgeStore)
            #expect(Self.differences(try cli.contents(of: json), Self.edgeStore) == [])

            // json: -> file -> userdefaults: -> file -> sqlite: (JSON) or lmdb: (property list).
            let first = cli.path("first.\(format)")
            try cli.succeed(["--store", json, "export", "--format", format, "--output", first])
            try cli.succeed(["--store", suite, "import", first])
            #expect(Self.differences(try cli.contents(of: suite), Self.edgeStore) == [])
            let second = cli.path("second.\(format)")
            try cli.succeed(["--store", suite, "export", "--format", format, "--output", second])
            let last = format == "json" ? "sqlite:" + cli.path("copy.sqlite") : "lmdb:" + cli.path("copy.lmdb")
            try cli.succeed(["--store", last, "import", "--format", format, second])
            #expect(Self.differences(try cli.contents(of: last), Self.edgeStore) == [])
            if format == "json" {
                // The same store gives the same bytes, whichever backend it came from.
                #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == Data(contentsOf: URL(fileURLWithPath: second)))
            }
        }
    }

    @Test func aJSONExportIsItselfAJSONStore() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let values: [String: DefaultsValue] = ["a": .double(-0.0), "b": .date(Date(timeIntervalSinceReferenceDate: 1.000_000_1))]
            try cli.fill(cli.json(), with: values)
            try cli.succeed(["--store", cli.json(), "export", "--output", cli.path("export.json")])
            #expect(try cli.contents(of: cli.json("export.json")) == values)
        }
    }

    @Test func exportReplacesTheOutputFileKeepingItsPermissions() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["k": .int(1)])
            let output = cli.path("private.json")
            try Data("old".utf8).write(to: URL(fileURLWithPath: output))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: output)
            try cli.succeed(["--store", cli.json(), "export", "--output", output])
            #expect(try cli.contents(of: "json:" + output) == ["k": .int(1)])
            #expect(try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? Int == 0o600)
            // A symbolic link stays a link; the file it names is replaced.
            let link = cli.path("link.json")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: output)
            try cli.fill(cli.json(), with: ["k": .int(2)])
            try cli.succeed(["--store", cli.json(), "export", "--output", link])
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == output)
            #expect(try cli.contents(of: "json:" + output) == ["k": .int(2)])
            // A device is written, not replaced.
            let device = try cli.succeed(["--store", cli.json(), "export", "--output", "/dev/stdout"])
            #expect(try ExactJSON.store(from: Data(device.standardOutput.utf8)) == ["k": .int(2)])
            // No temporary file is left beside it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".anydefaults") } == [])
        }
    }

    @Test func aPlistExportIsAnOrdinaryPropertyListForFoundation() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let date = Date(timeIntervalSinceReferenceDate: 800_000_000.125)
            try cli.fill(cli.json(), with: ["flag": .bool(true), "count": .int(1), "ratio": .double(-0.0), "when": .date(date), "name": .string("café")])
            let file = cli.path("export.plist")
            try cli.succeed(["--store", cli.json(), "export", "--format", "plist", "--output", file])
            var format = PropertyListSerialization.PropertyListFormat.xml
            let object = try PropertyListSerialization.propertyList(from: Data(contentsOf: URL(fileURLWithPath: file)), options: [], format: &format)
            let plist = try #require(object as? [String: Any])
            #expect(format == .binary)
            #expect(plist["flag"] as? Bool == true)
            #expect((plist["count"] as? NSNumber)?.int64Value == 1)
            #expect((plist["ratio"] as? Double)?.sign == .minus)
            #expect(plist["when"] as? Date == date)
            #expect(plist["name"] as? String == "café")
        }
    }

    @Test func importReadsAnXMLPropertyListFromFoundation() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let object: [String: Any] = ["flag": true, "count": 7, "ratio": 0.5, "list": ["a", 1], "blob": Data([1, 2])]
            let xml = try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
            try xml.write(to: URL(fileURLWithPath: cli.path("foundation.plist")))
            try cli.succeed(["--store", cli.json(), "import", cli.path("foundation.plist")])
            #expect(try cli.contents(of: cli.json()) == [
                "flag": .bool(true), "count": .int(7), "ratio": .double(0.5), "list": .array([.string("a"), .int(1)]), "blob": .data(Data([1, 2])),
            ])
        }
    }

    @Test func importAddsOrWithReplaceMakesTheStoreEqualTheFile() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let file = cli.path("in.json")
            try ExactJSON.data(from: ["a": .int(10), "new": .int(11)]).write(to: URL(fileURLWithPath: file))
            try cli.fill(cli.json(), with: ["a": .int(1), "old": .int(2)])
            try cli.succeed(["--store", cli.json(), "import", file])
            #expect(try cli.contents(of: cli.json()) == ["a": .int(10), "new": .int(11), "old": .int(2)])
            let replaced = try cli.succeed(["--store", cli.json(), "import", "--replace", file])
            #expect(try cli.contents(of: cli.json()) == ["a": .int(10), "new": .int(11)])
            // Piped, it prints nothing, progress included.
            #expect(replaced.standardOutput.isEmpty && replaced.standardError.isEmpty)
        }
    }

    @Test func exportToStandardOutputPipesIntoImportFromStandardInput() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["k": .data(Data([0, 1, 2]))])
            let exported = try cli.succeed(["--store", cli.json(), "export", "--format", "json"]).standardOutput
            let process = Process()
            process.executableURL = try ChildProcess.executable("anydefaults")
            process.arguments = ["--store", cli.json("piped.json"), "import", "-"]
            process.environment = ProcessInfo.processInfo.environment.merging(cli.environment) { $1 }
            let input = Pipe()
            process.standardInput = input
            try process.run()
            try input.fileHandleForWriting.write(contentsOf: Data(exported.utf8))
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(try cli.contents(of: cli.json("piped.json")) == ["k": .data(Data([0, 1, 2]))])
        }
    }

    @Test func aDamagedImportFileChangesNothingAndNamesTheFile() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["keep": .int(1)])
            let cases: [(name: String, bytes: Data, arguments: [String])] = [
                ("truncated.json", Data(#"{"a": 1, "b": "#.utf8), []),
                ("null.json", Data(#"{"a": null}"#.utf8), []),
                ("array.json", Data("[1, 2]".utf8), []),
                ("garbage.plist", Data("bplist00 this is not one".utf8), []),
                ("random.bin", Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7919) }), ["--format", "plist"]),
                ("json-as-plist.json", Data(#"{"a": 1}"#.utf8), ["--format", "plist"]),
                ("empty-key.json", Data(#"{"": 1}"#.utf8), []),
                ("too-deep.json", Data((#"{"a": "# + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000) + "}").utf8), []),
            ]
            for item in cases {
                let path = cli.path(item.name)
                try item.bytes.write(to: URL(fileURLWithPath: path))
                let result = try cli.run(["--store", cli.json(), "import", "--replace", path] + item.arguments)
                #expect(result.status == 65, "\(item.name): \(result.status) \(result.standardError)")
                #expect(!result.wasSignaled)
                #expect(result.standardError.hasPrefix("anydefaults: \(path) is not a valid"), "\(item.name): \(result.standardError)")
                #expect(try cli.contents(of: cli.json()) == ["keep": .int(1)], "\(item.name)")
            }
        }
    }

    @Test func migrateCopiesEveryKeyAndMoveEmptiesTheSource() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let source = cli.json("source.json")
            let values = Dictionary(uniqueKeysWithValues: ConformanceValues.edgeCases.prefix(30).map { ($0.name, $0.value) })
            try cli.fill(source, with: values)
            try cli.fill(cli.suite(), with: ["already.there": .int(1)])
            try cli.succeed(["--store", source, "migrate", "--to", cli.suite()])
            var expected = values
            expected["already.there"] = .int(1)
            #expect(Self.differences(try cli.contents(of: cli.suite()), expected) == [])
            #expect(try cli.contents(of: source) == values)

            try cli.succeed(["--store", cli.suite(), "migrate", "--to", cli.json("destination.json"), "--move"])
            #expect(Self.differences(try cli.contents(of: cli.json("destination.json")), expected) == [])
            #expect(try cli.holdsNothing(cli.suite()))
        }
    }

    @Test func migrateRefusesToCopyAStoreOntoItself() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["k": .int(1)])
            let result = try cli.run(["--store", cli.json(), "migrate", "--move", "--to", "json:" + cli.path("./sub/../store.json")])
            #expect(result.status == 64)
            #expect(result.standardError.contains("same store"))
            #expect(try cli.contents(of: cli.json()) == ["k": .int(1)])
        }
    }
}
