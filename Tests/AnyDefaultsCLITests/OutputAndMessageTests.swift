import AnyDefaults
import Foundation
import TestSupport
import Testing

/// What the tool prints: output that cannot be written is an error (74), never a silent exit 0;
/// and no key or path can make a message or a listed name print as two lines.
@Suite(.ownThreads) struct OutputAndMessageTests {
    // MARK: Output that cannot be written

    /// Where standard output goes: a full device, or a pipe nobody reads any more.
    enum Sink: String, CaseIterable, CustomTestStringConvertible {
        case full = "/dev/full"
        case closedPipe = "a closed pipe"

        var testDescription: String { rawValue }

        func handle() throws -> FileHandle {
            switch self {
            case .full:
                return try #require(FileHandle(forWritingAtPath: "/dev/full"))
            case .closedPipe:
                let pipe = Pipe()
                try pipe.fileHandleForReading.close()
                return pipe.fileHandleForWriting
            }
        }
    }

    static let printing: [[String]] = [
        ["read"], ["read", "ui.theme"], ["read", "ui.theme", "--raw"], ["keys"], ["keys", "--prefix", "ui."], ["export"],
        ["export", "--format", "plist"], ["bench", "--stores", "memory:", "--keys", "2", "--ops", "2"],
        ["bench", "--stores", "memory:", "--keys", "2", "--ops", "2", "--json"],
        // verify takes the --store given (a scratch store of its kind); its first line fails.
        ["verify"],
    ]

    @Test(arguments: Sink.allCases)
    func outputThatCannotBeWrittenFailsWith74(_ sink: Sink) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            try cli.fill(store, with: sampleValues)
            for command in Self.printing {
                let handle = try sink.handle()
                let result = try cli.runBounded(["--store", store] + command, standardOutput: handle)
                try? handle.close()
                #expect(result.status == 74 && !result.wasSignaled, "\(command): \(result.status) \(result.standardError)")
                #expect(result.standardError.contains("standard output"), "\(command): \(result.standardError)")
            }
            // `watch` stops at its first line that cannot be written.
            let handle = try sink.handle()
            let process = Process()
            process.executableURL = try ChildProcess.executable("anydefaults")
            process.arguments = ["--store", store, "watch"]
            process.environment = ProcessInfo.processInfo.environment.merging(cli.environment) { $1 }
            process.standardOutput = handle
            process.standardError = FileHandle.nullDevice
            try process.run()
            try? handle.close()
            let deadline = ContinuousClock.now + .seconds(20)
            var value = 0
            while process.isRunning, ContinuousClock.now < deadline {
                usleep(200_000)
                value += 1
                try cli.succeed(["--store", store, "write", "ui.theme", "v\(value)"])
            }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            #expect(process.terminationStatus == 74 && process.terminationReason == .exit, "watch: \(process.terminationStatus)")
        }
    }

    // MARK: Control characters

    static let hostileNames = [
        "line\nbreak", "carriage\rreturn", "tab\there", "escape\u{1B}[31mred", "delete\u{7F}", "next\u{85}line",
        "separator\u{2028}here", "paragraph\u{2029}here", "override\u{202E}txt.exe", "isolate\u{2066}x\u{2069}",
    ]

    /// A key with a control character: every message naming it, every listed line, prints on one
    /// line and shows no control character.
    @Test(arguments: hostileNames)
    func aKeyNeverBreaksALine(_ key: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            // The store exists (reading a missing store is "no such store", 66): the key does not.
            try cli.succeed(["--store", store, "write", "other", "v"])
            try cli.succeed(["--store", store, "delete", "other"])
            let missing = try cli.run(["--store", store, "read", key])
            #expect(missing.status == 1)
            Self.expectOneCleanLine(missing.standardError, "read: \(key.debugDescription)")
            try cli.succeed(["--store", store, "write", key, "v"])
            let keys = try cli.succeed(["--store", store, "keys"]).standardOutput
            Self.expectOneCleanLine(keys, "keys: \(key.debugDescription)")
            // The escape reads back unambiguously: a backslash prints doubled.
            try cli.succeed(["--store", store, "write", "back\\slash", "v"])
            let both = try cli.succeed(["--store", store, "keys"]).standardOutput
            #expect(both.contains("back\\\\slash\n"))
            // The whole store as JSON keeps the exact key.
            #expect(try cli.contents(of: store)[key] == .string("v"))
            // A value that is not a valid int, under that key: one line.
            let bad = try cli.run(["--store", store, "write", key, "x", "--type", "int"])
            #expect(bad.status == 64)
            // `watch` lines are one per change.
            let watcher = try cli.start(["--store", store, "watch", "--count", "1"])
            // A write made before the watcher has read the store is not a change to it: write
            // new values until one is reported.
            for attempt in 0..<50 where !watcher.wait(timeout: .milliseconds(200), until: { !$0.isEmpty }) {
                try cli.succeed(["--store", store, "write", key, "w\(attempt)"])
            }
            _ = watcher.finish()
            #expect(watcher.lines.count == 1 && watcher.lines.allSatisfy(Self.isClean), "\(watcher.lines)")
            #expect(watcher.lines.first?.filter { $0 == "\t" }.count == 1, "\(watcher.lines)")
        }
    }

    /// A path with a control character: the error that names it is one line.
    @Test(arguments: hostileNames)
    func aPathNeverBreaksALine(_ name: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = cli.path("missing-\(name)/store")
            for arguments in [
                ["--store", "sqlite:" + path, "keys"], ["--store", "lmdb:" + path, "keys"],
                ["--store", "memory:", "export", "--output", path], ["--store", "memory:", "import", path],
                ["--store", "json:" + cli.path(name + ".json"), "read", "absent"],
            ] {
                let result = try cli.run(arguments)
                #expect(result.status != 0)
                Self.expectOneCleanLine(result.standardError, "\(arguments)")
            }
            // A damaged JSON store whose name holds it: the error names the file on one line.
            try Data("{".utf8).write(to: URL(fileURLWithPath: cli.path(name + ".json")))
            let damaged = try cli.run(["--store", "json:" + cli.path(name + ".json"), "keys"])
            #expect(damaged.status == 74)
            Self.expectOneCleanLine(damaged.standardError, "damaged")
        }
    }

    /// Reports for people (bench's table, verify's lines) name the store as given: its control
    /// characters are escaped, so every line of the report is a line of the report.
    @Test func reportsNameHostileStoresOnOneLine() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = "json:line\nbreak\u{1B}[2J.json"
            let bench = try cli.succeed(["bench", "--stores", store, "--keys", "2", "--ops", "2"]).standardOutput
            let verify = try cli.succeed(["verify", store]).standardOutput
            for report in [bench, verify] {
                #expect(report.split(separator: "\n").allSatisfy(Self.isClean), "\(report.debugDescription)")
            }
            #expect(bench.contains("json:line\\u{0A}break\\u{1B}[2J.json"), "\(bench)")
        }
    }

    static func isClean(_ line: some StringProtocol) -> Bool {
        !line.unicodeScalars.contains { scalar in
            (0x00...0x1F).contains(scalar.value) && scalar != "\t" || (0x7F...0x9F).contains(scalar.value)
                || [0x2028, 0x2029, 0x202E, 0x2066, 0x2069].contains(scalar.value)
        }
    }

    static func expectOneCleanLine(_ text: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines.last == "", "\(context): \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(lines.allSatisfy(isClean), "\(context): \(text.debugDescription)", sourceLocation: sourceLocation)
    }
}
