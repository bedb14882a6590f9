import AnyDefaults
import AnyDefaultsTesting
import Foundation
import TestSupport
import Testing

/// `read`, `write`, `delete` and `keys`, run as the built executable.
@Suite(.ownThreads) struct ReadWriteTests {
    @Test func writeThenReadEachType() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            let cases: [(type: String, text: String, printed: String)] = [
                ("string", "dark", #""dark""#),
                ("int", "-9223372036854775808", "-9223372036854775808"),
                ("double", "1", "1.0"),
                ("double", "-0.0", "-0.0"),
                ("double", "-inf", #"{"$double": "-inf"}"#),
                ("bool", "yes", "true"),
                ("date", "2026-11-21T09:30:00.250+01:00", #"{"$date": "2026-11-21T08:30:00.25Z"}"#),
                ("data", "yv4=", #"{"$data": "yv4="}"#),
                ("json", #"[1, 1.0, true, "1"]"#, "[\n  1,\n  1.0,\n  true,\n  \"1\"\n]"),
            ]
            for (index, item) in cases.enumerated() {
                try cli.succeed(["--store", store, "write", "k\(index)", item.text, "--type", item.type])
                let read = try cli.succeed(["read", "k\(index)", "--store", store])
                #expect(read.standardOutput == item.printed + "\n", "\(item.type) \(item.text)")
                #expect(read.standardError.isEmpty)
            }
        }
    }

    @Test func rawPrintsAStringBareAndOtherValuesAsJSON() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            try cli.succeed(["--store", store, "write", "motto", "say \"hi\"\nbye"])
            try cli.succeed(["--store", store, "write", "count", "3", "--type", "int"])
            #expect(try cli.succeed(["--store", store, "read", "--raw", "motto"]).standardOutput == "say \"hi\"\nbye\n")
            #expect(try cli.succeed(["--store", store, "read", "motto"]).standardOutput == #""say \"hi\"\nbye""# + "\n")
            #expect(try cli.succeed(["--store", store, "read", "--raw", "count"]).standardOutput == "3\n")
        }
    }

    @Test func readWithoutKeyPrintsTheWholeStoreAsOneExactObject() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            let values: [String: DefaultsValue] = [
                "a": .int(1), "b": .double(1), "c": .bool(true), "d": .double(.nan), "e": .date(Date(timeIntervalSinceReferenceDate: 0.125)),
                "f": .dictionary(["x": .array([.data(Data([0, 255])), .string("")])]),
            ]
            try cli.fill(store, with: values)
            let result = try cli.succeed(["--store", store, "read"])
            #expect(try ExactJSON.store(from: Data(result.standardOutput.utf8)) == values)
            // An empty store is an empty object.
            try cli.succeed(["--store", cli.json("empty.json"), "write", "k", "v"])
            try cli.succeed(["--store", cli.json("empty.json"), "delete", "k"])
            #expect(try cli.succeed(["--store", cli.json("empty.json"), "read"]).standardOutput == "{}\n")
        }
    }

    @Test func anAbsentKeyExitsWithOneAndSaysSoOnStandardError() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.succeed(["--store", cli.json(), "write", "other.key", "v"])
            let result = try cli.run(["--store", cli.json(), "read", "missing.key"])
            #expect(result.status == 1)
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError.contains("\"missing.key\""))
            #expect(result.standardError.contains(cli.path("store.json")))
        }
    }

    @Test(arguments: ConformanceValues.edgeCases.filter { $0.name.contains("KiB") == false && $0.name.contains("MiB") == false }.map(\.name))
    func everyEdgeValueWrittenAsJSONReadsBackExactly(_ name: String) throws {
        let value = try #require(ConformanceValues.edgeCases.first { $0.name == name }?.value)
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.succeed(["--store", cli.json(), "write", "edge", "--type", "json", "--", ExactJSON.string(from: value)])
            let read = try cli.succeed(["--store", cli.json(), "read", "edge"])
            #expect(try ExactJSON.value(from: read.standardOutput) == value)
        }
    }

    @Test func theStoreComesFromTheEnvironmentWhenNotGiven() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let environment = ["ANYDEFAULTS_STORE": cli.json("from-env.json")]
            #expect(try cli.run(["write", "k", "v"], environment: environment).status == 0)
            #expect(try cli.run(["read", "k"], environment: environment).standardOutput == "\"v\"\n")
            #expect(FileManager.default.fileExists(atPath: cli.path("from-env.json")))
            // --store wins over the environment.
            try cli.succeed(["--store", cli.json("other.json"), "write", "other", "v"])
            #expect(try cli.run(["--store", cli.json("other.json"), "read", "k"], environment: environment).status == 1)
        }
    }

    @Test func withoutStoreOrEnvironmentTheStoreIsSQLiteInTheDataDirectory() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.succeed(["write", "k", "v"])
            #expect(try cli.succeed(["read", "k"]).standardOutput == "\"v\"\n")
            let path = cli.path("data/anydefaults/defaults.sqlite")
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(try cli.contents(of: "sqlite:" + path) == ["k": .string("v")])
            let attributes = try FileManager.default.attributesOfItem(atPath: cli.path("data/anydefaults"))
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0, "the directory is private")
        }
    }

    @Test func keysAreSortedOnePerLineAndFilteredByPrefix() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            try cli.fill(store, with: ["ui.theme": .int(1), "b": .int(2), "ui.font": .int(3), "a": .int(4), "uix": .int(5)])
            #expect(try cli.succeed(["--store", store, "keys"]).standardOutput == "a\nb\nui.font\nui.theme\nuix\n")
            #expect(try cli.succeed(["--store", store, "keys", "--prefix", "ui."]).standardOutput == "ui.font\nui.theme\n")
            try cli.succeed(["--store", cli.json("empty.json"), "write", "k", "v"])
            try cli.succeed(["--store", cli.json("empty.json"), "delete", "k"])
            #expect(try cli.succeed(["--store", cli.json("empty.json"), "keys"]).standardOutput.isEmpty)
        }
    }

    @Test func deleteKeysAPrefixOrEverything() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            try cli.fill(store, with: ["a": .int(1), "b": .int(2), "ui.x": .int(3), "ui.y": .int(4), "z": .int(5)])
            try cli.succeed(["--store", store, "delete", "a", "b", "not-there"])
            #expect(try cli.contents(of: store) == ["ui.x": .int(3), "ui.y": .int(4), "z": .int(5)])
            try cli.succeed(["--store", store, "delete", "--prefix", "ui."])
            #expect(try cli.contents(of: store) == ["z": .int(5)])
            try cli.succeed(["--store", store, "delete", "--all"])
            #expect(try cli.contents(of: store) == [:])
        }
    }

    @Test func theStoreOptionWorksBeforeAndAfterTheCommand() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.succeed(["--store", cli.json(), "write", "k", "1"])
            #expect(try cli.succeed(["read", "k", "--store", cli.json()]).standardOutput == "\"1\"\n")
        }
    }

    /// Reading commands leave the store's files as they were: they open it without a cache, so
    /// nothing observes it and no SQLite or LMDB watcher registration (a write) is made.
    @Test(arguments: [("sqlite", "store.sqlite", "store.sqlite"), ("lmdb", "store.lmdb", "store.lmdb/data.mdb")])
    func readingCommandsWriteNothing(scheme: String, location: String, dataFile: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = "\(scheme):" + cli.path(location)
            try cli.succeed(["--store", store, "write", "theme", "dark"])
            func state() throws -> (bytes: Data, modified: Date?) {
                // Bytes alone miss a row written and deleted again; the modification time does not.
                let path = cli.path(dataFile)
                return (try Data(contentsOf: URL(fileURLWithPath: path)),
                        try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
            }
            let before = try state()
            #expect(try cli.succeed(["--store", store, "read", "theme"]).standardOutput == "\"dark\"\n")
            try cli.succeed(["--store", store, "read"])
            try cli.succeed(["--store", store, "keys"])
            try cli.succeed(["--store", store, "export"])
            let after = try state()
            #expect(after.bytes == before.bytes, "\(scheme): a reading command changed \(dataFile)")
            #expect(after.modified == before.modified, "\(scheme): a reading command wrote \(dataFile)")
        }
    }
}
