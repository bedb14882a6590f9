import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Reading commands never create a store, and errors that come from `ANYDEFAULTS_STORE` or the
/// configuration file say so; run as the built executable.
@Suite(.ownThreads) struct NoSuchStoreTests {
    /// Every reading command, as run on a store.
    static let readingCommands: [[String]] = [
        ["read", "k"], ["read"], ["read", "--raw", "k"], ["read-type", "k"], ["keys"], ["keys", "--prefix", "a"], ["export"],
        ["export", "--format", "plist", "--output", "out.plist"], ["watch", "--count", "1"],
        // A migration reads its source: a mistyped one is no copy of nothing.
        ["migrate", "--to", "memory:"],
    ]
    /// The reading commands that end by themselves and need no file argument.
    static let quickReadingCommands = readingCommands.filter { $0.first != "watch" && !$0.contains("out.plist") }

    /// Every file and directory in the sandbox, to show that a command left nothing behind.
    static func everything(in cli: CLI) -> Set<String> {
        Set(FileManager.default.subpaths(atPath: cli.directory.path) ?? [])
    }

    /// Each reading command on a store that does not exist exits 66 "no such store", on every
    /// persistent backend, and the sandbox holds exactly what it held before: no data file, no
    /// lock or journal, no LMDB directory, no suite file.
    @Test(arguments: StoreKind.persistent)
    func readingCommandsOnAMissingStoreExit66AndCreateNothing(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let before = Self.everything(in: cli)
            let store = kind.store(cli)
            for command in Self.readingCommands {
                let arguments = ["--store", store] + command.map { $0 == "out.plist" ? cli.path("out.plist") : $0 }
                let result = try cli.runBounded(arguments, timeout: .seconds(20))
                #expect(result.status == 66, "\(kind) \(command): \(result.standardError)")
                #expect(result.standardError == "anydefaults: no such store: \(store)\n", "\(kind) \(command)")
                #expect(result.standardOutput.isEmpty, "\(kind) \(command)")
                #expect(Self.everything(in: cli) == before, "\(kind) \(command) left \(Self.everything(in: cli).subtracting(before))")
            }
            // Once written, the same commands read it.
            try cli.succeed(["--store", store, "write", "k", "v"])
            #expect(try cli.succeed(["--store", store, "keys"]).standardOutput == "k\n")
        }
    }

    /// A store inside directories that do not exist: neither is created.
    @Test(arguments: StoreKind.pathBased)
    func aMissingDirectoryIsNotCreatedEither(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind.store(cli, location: cli.path("missing/deeper/store") + (kind.scheme == "lmdb" ? "" : "." + kind.scheme))
            for command in Self.quickReadingCommands {
                let result = try cli.run(["--store", store] + command)
                #expect(result.status == 66, "\(kind) \(command): \(result.standardError)")
            }
            #expect(!FileManager.default.fileExists(atPath: cli.path("missing")))
        }
    }

    /// An LMDB directory that exists but holds no environment is no store; it stays empty.
    @Test func anEmptyLMDBDirectoryIsNoStoreAndStaysEmpty() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try FileManager.default.createDirectory(atPath: cli.path("empty.lmdb"), withIntermediateDirectories: false)
            let result = try cli.run(["--store", "lmdb:" + cli.path("empty.lmdb"), "keys"])
            #expect(result.status == 66)
            #expect(result.standardError.contains("no such store"), "\(result.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: cli.path("empty.lmdb")).isEmpty)
        }
    }

    /// The default store (no --store, no environment) is not created by reading, not even its
    /// directory; the first write creates it and reading works from then on.
    @Test func theDefaultStoreIsCreatedByTheFirstWriteOnly() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            for command in Self.quickReadingCommands {
                let result = try cli.run(command)
                #expect(result.status == 66, "\(command): \(result.standardError)")
                #expect(result.standardError.contains("no such store: sqlite:\(cli.path("data/anydefaults/defaults.sqlite"))"), "\(result.standardError)")
                #expect(result.standardError.contains("the default store; `anydefaults write` creates it"), "\(result.standardError)")
                #expect(!FileManager.default.fileExists(atPath: cli.path("data/anydefaults")), "\(command) created the directory")
            }
            try cli.succeed(["write", "k", "v"])
            #expect(try cli.succeed(["read", "k"]).standardOutput == "\"v\"\n")
        }
    }

    /// "no such store" names where the store came from when it was not `--store`.
    @Test func noSuchStoreNamesTheEnvironmentVariableOrTheConfigurationFile() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = "sqlite:" + cli.path("absent.sqlite")
            let fromVariable = try cli.run(["keys"], environment: ["ANYDEFAULTS_STORE": store])
            #expect(fromVariable.status == 66)
            #expect(fromVariable.standardError == "anydefaults: no such store: \(store) (named by ANYDEFAULTS_STORE)\n")
            let file = cli.path("config.json")
            // A relative path in the file is resolved against the file's directory.
            try Data(#"{"store": "json:absent.json"}"#.utf8).write(to: URL(fileURLWithPath: file))
            let fromFile = try cli.run(["keys"], environment: ["ANYDEFAULTS_CONFIG": file])
            #expect(fromFile.status == 66)
            #expect(
                fromFile.standardError
                    == "anydefaults: no such store: json:\(cli.path("absent.json")) (named by the configuration file \(file), from ANYDEFAULTS_CONFIG)\n")
            #expect(!FileManager.default.fileExists(atPath: cli.path("absent.json")))
            #expect(!FileManager.default.fileExists(atPath: cli.path("absent.sqlite")))
        }
    }
}
