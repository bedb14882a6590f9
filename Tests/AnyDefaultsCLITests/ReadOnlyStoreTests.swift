import AnyDefaults
import Foundation
import TestSupport
import Testing

/// A store file of any persistent backend made read-only (`chmod 400`, `444`) in a writable directory:
/// every reading command reads it; every writing command is refused with "permission denied"
/// (77), also as root, and the file is left byte for byte.
@Suite(.ownThreads) struct ReadOnlyStoreTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var kind: StoreKind
        var mode: mode_t
        var testDescription: String { "\(kind.scheme): mode \(String(mode, radix: 8))" }
    }

    static let cases = StoreKind.persistent.flatMap { kind in [0o400, 0o444, 0o500].map { Case(kind: kind, mode: $0) } }

    @Test(arguments: cases)
    func aReadOnlyStoreIsReadableAndRefusesWrites(_ item: Case) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = item.kind.store(cli)
            try cli.fill(store, with: sampleValues)
            let file = item.kind.dataFile(cli)
            #expect(chmod(file, item.mode) == 0)
            let before = FileManager.default.contents(atPath: file)
            try ExactJSON.data(from: ["new": .int(1)]).write(to: URL(fileURLWithPath: cli.path("import.json")))

            // Every reading command.
            #expect(try cli.contents(of: store) == sampleValues)
            #expect(try cli.succeed(["--store", store, "read", "ui.theme"]).standardOutput == "\"dark\"\n")
            #expect(try cli.succeed(["--store", store, "keys"]).standardOutput == sampleValues.keys.sorted().map { $0 + "\n" }.joined())
            try cli.succeed(["--store", store, "read"])
            try cli.succeed(["--store", store, "export", "--format", "plist", "--output", cli.path("out.plist")])
            try cli.succeed(["--store", store, "migrate", "--to", "json:" + cli.path("copy.json")])
            #expect(try cli.contents(of: "json:" + cli.path("copy.json")) == sampleValues)
            let watcher = try cli.start(["--store", store, "watch", "--count", "1"])
            usleep(500_000)
            #expect(watcher.process.isRunning, "watch ended at once: \(watcher.finish(timeout: .seconds(1)))")
            kill(watcher.process.processIdentifier, SIGINT)
            _ = watcher.finish()

            // Every writing command.
            let writes: [[String]] = [
                ["write", "ui.theme", "light"], ["write", "new", "1", "--type", "int"], ["delete", "ui.theme"],
                ["delete", "--prefix", "ui."], ["delete", "--all"], ["import", cli.path("import.json")],
                ["import", "--replace", cli.path("import.json")], ["migrate", "--to", "json:" + cli.path("moved.json"), "--move"],
            ]
            for command in writes {
                let result = try cli.run(["--store", store] + command)
                #expect(result.status == 77, "\(command): \(result.standardError)")
                #expect(result.standardError.contains("read-only"), "\(command): \(result.standardError)")
                #expect(FileManager.default.contents(atPath: file) == before, "\(command) changed the file")
            }
            // Into the store from elsewhere.
            try cli.fill("json:" + cli.path("source.json"), with: ["from": .int(1)])
            let result = try cli.run(["--store", "json:" + cli.path("source.json"), "migrate", "--to", store, "--move"])
            #expect(result.status == 77, "\(result.standardError)")
            #expect(try cli.contents(of: "json:" + cli.path("source.json")) == ["from": .int(1)])
            #expect(FileManager.default.contents(atPath: file) == before)
            #expect(try cli.contents(of: store) == sampleValues)
        }
    }
}
