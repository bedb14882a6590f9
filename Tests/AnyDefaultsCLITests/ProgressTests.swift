import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Long jobs show progress on a terminal (and only there; the other tests check that piped runs
/// print nothing on standard error). `script` gives the command a pseudo-terminal.
@Suite(.ownThreads, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
struct ProgressTests {
    /// Runs `anydefaults ARGUMENTS` on a pseudo-terminal and returns what it showed there.
    static func onTerminal(_ cli: CLI, _ arguments: [String]) throws -> (status: Int32, screen: String) {
        let executable = try ChildProcess.executable("anydefaults").path
        let command = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(cli.environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let screen = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, screen)
    }

    @Test func importAndMigrateShowProgressAndASummaryOnATerminal() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let file = cli.path("in.json")
            try ExactJSON.data(from: ["a": .int(1), "b": .int(2)]).write(to: URL(fileURLWithPath: file))
            let imported = try Self.onTerminal(cli, ["--store", cli.json(), "import", file])
            #expect(imported.status == 0)
            #expect(imported.screen.contains("import: writing 2 keys in one batch"))
            #expect(imported.screen.contains("Imported 2 keys into json:"))
            let migrated = try Self.onTerminal(cli, ["--store", cli.json(), "migrate", "--to", cli.json("to.json")])
            #expect(migrated.status == 0)
            #expect(migrated.screen.contains("migrate: writing 2 keys"))
            #expect(migrated.screen.contains("Copied 2 keys from json:"))
        }
    }

    @Test func benchShowsWhichStepItIsOnOnATerminal() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let run = try Self.onTerminal(cli, ["bench", "--stores", "memory:", "--keys", "2", "--ops", "2"])
            #expect(run.status == 0)
            #expect(run.screen.contains("bench: [1/3] UserDefaults: batch"))
            #expect(run.screen.contains("bench: [3/3] memory: cached: skipped write"))
            // The progress line is erased before the table.
            #expect(run.screen.contains("\r\u{1B}[2KMean cost per operation"))
        }
    }
}
