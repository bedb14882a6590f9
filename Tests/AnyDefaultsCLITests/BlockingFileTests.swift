import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Nothing a command opens may make it wait forever: a FIFO (or a link to one) where a store
/// file belongs is refused at once, every lock wait ends in "busy" (75), and the tool's own input
/// and output files never block on open, while pipes, FIFOs with a writer, `/dev/stdin` and
/// process substitution are read as streams.
@Suite(.ownThreads) struct BlockingFileTests {
    /// A FIFO planted where a store keeps a file.
    struct Plant: Sendable, CustomTestStringConvertible {
        var kind: StoreKind
        var file: Int
        var throughLink: Bool

        var testDescription: String { "\(kind.scheme): file \(file)\(throughLink ? " (a link to a FIFO)" : "")" }

        static var all: [Plant] {
            var plants: [Plant] = []
            for throughLink in [false, true] {
                plants += [Plant(kind: .json, file: 0, throughLink: throughLink), Plant(kind: .userDefaults, file: 0, throughLink: throughLink)]
                plants.append(Plant(kind: .sqlite, file: 0, throughLink: throughLink))
            }
            plants.append(Plant(kind: .json, file: 1, throughLink: false))
            plants.append(Plant(kind: .lmdb, file: 0, throughLink: false))
            return plants
        }
    }

    static let commands: [[String]] = [
        ["read"], ["read", "k"], ["keys"], ["export"], ["write", "k", "v"], ["delete", "k"], ["delete", "--all"],
    ]

    @Test(arguments: Plant.all)
    func aFIFOWhereAStoreFileBelongsIsRefusedWithoutWaiting(_ plant: Plant) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = plant.kind.store(cli)
            let file = plant.kind.files(cli)[plant.file]
            if plant.kind.scheme == "json", plant.file == 1 {
                try cli.fill(store, with: ["k": .int(1)])
                try FileManager.default.removeItem(atPath: file)
            }
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            if plant.throughLink {
                #expect(mkfifo(cli.path("the-fifo"), 0o600) == 0)
                try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: cli.path("the-fifo"))
            } else {
                #expect(mkfifo(file, 0o600) == 0)
            }
            // A FIFO as the data file fails every command; as the lock file, every write (readers
            // do not take the lock).
            let isDataFile = plant.file == 0
            for command in Self.commands {
                let started = ContinuousClock.now
                let result = try cli.runBounded(["--store", store] + command, timeout: .seconds(20))
                #expect(!result.wasSignaled)
                #expect(ContinuousClock.now - started < .seconds(15))
                if isDataFile || ["write", "delete"].contains(command[0]) {
                    #expect(result.status != 0, "\(command): \(result.standardError)")
                    #expect(!result.standardError.isEmpty)
                }
            }
        }
    }

    /// A writer stopped (SIGSTOP) while it holds the lock of a JSON store or the preferences
    /// directory: every other writer gives up with "busy" after its lock timeout.
    @Test(arguments: StoreKind.fileWritten)
    func aStoppedLockHolderMakesWritersBusyNotBlocked(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind.store(cli)
            try cli.fill(store, with: ["k": .int(1)])
            try ExactJSON.data(from: ["other": .int(2)]).write(to: URL(fileURLWithPath: cli.path("export.json")))
            let (holder, output, _) = try ChildProcess.start("TestChild", ["hold-lock", store, "120"], environment: cli.environment)
            defer {
                kill(holder.processIdentifier, SIGKILL)
                holder.waitUntilExit()
            }
            #expect(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
            kill(holder.processIdentifier, SIGSTOP)
            for command in [["write", "k", "2"], ["delete", "k"], ["import", cli.path("export.json")]] {
                let started = ContinuousClock.now
                let result = try cli.runBounded(["--store", store + "?locktimeout=1"] + command, timeout: .seconds(30))
                #expect(result.status == 75, "\(command): \(result.standardError)")
                #expect(result.standardError.contains("busy"), "\(result.standardError)")
                #expect(ContinuousClock.now - started < .seconds(20))
            }
            // Readers do not wait for writers at all.
            #expect(try cli.runBounded(["--store", store, "read", "k"], timeout: .seconds(20)).standardOutput == "1\n")
        }
    }

    // MARK: The tool's own files

    @Test func anExportToAFIFOWithoutAReaderIsRefusedAtOnce() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            #expect(mkfifo(cli.path("out.fifo"), 0o600) == 0)
            try FileManager.default.createSymbolicLink(atPath: cli.path("link.fifo"), withDestinationPath: cli.path("out.fifo"))
            for output in [cli.path("out.fifo"), cli.path("link.fifo")] {
                let result = try cli.runBounded(["--store", "memory:", "export", "--output", output], timeout: .seconds(20))
                #expect(result.status == 73, "\(result.standardError)")
                #expect(result.standardError.contains("no process is reading it"))
            }
            // With a reader, the FIFO gets the export.
            let reader = Collected()
            let thread = Thread {
                if let handle = FileHandle(forReadingAtPath: cli.path("out.fifo")) {
                    reader.data.withLock { $0 = handle.readDataToEndOfFile() }
                }
            }
            thread.start()
            var result = try cli.runBounded(["--store", "memory:", "export", "--output", cli.path("out.fifo")], timeout: .seconds(20))
            for _ in 0..<100 where result.status == 73 {
                // The reader may not have opened its end yet.
                usleep(20_000)
                result = try cli.runBounded(["--store", "memory:", "export", "--output", cli.path("out.fifo")], timeout: .seconds(20))
            }
            #expect(result.status == 0, "\(result.standardError)")
            while !thread.isFinished { usleep(5_000) }
            #expect(reader.text == "{}\n")
        }
    }

    /// An export larger than a pipe's buffer (64 KiB) into a FIFO whose reader is slow arrives
    /// whole: the descriptor opened without blocking (to refuse a FIFO without a reader) blocks
    /// again for the writes.
    @Test func aLargeExportToASlowFIFOReaderArrivesWhole() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            let filler = String(repeating: "v", count: 1_000)
            try cli.fill(store, with: Dictionary(uniqueKeysWithValues: (0..<300).map { ("key\($0)", DefaultsValue.string(filler)) }))
            let expected = try cli.succeed(["--store", store, "export"]).standardOutput
            #expect(expected.utf8.count > 256 * 1024)
            #expect(mkfifo(cli.path("out.fifo"), 0o600) == 0)
            let reader = Collected()
            let thread = Thread {
                if let handle = FileHandle(forReadingAtPath: cli.path("out.fifo")) {
                    Thread.sleep(forTimeInterval: 0.5)           // the writer fills the buffer first
                    reader.data.withLock { $0 = handle.readDataToEndOfFile() }
                }
            }
            thread.start()
            var result = try cli.runBounded(["--store", store, "export", "--output", cli.path("out.fifo")], timeout: .seconds(30))
            for _ in 0..<100 where result.status == 73 && result.standardError.contains("no process is reading it") {
                usleep(20_000)                                    // the reader has not opened its end yet
                result = try cli.runBounded(["--store", store, "export", "--output", cli.path("out.fifo")], timeout: .seconds(30))
            }
            #expect(result.status == 0, "\(result.standardError)")
            if result.status != 0 { close(open(cli.path("out.fifo"), O_WRONLY | O_NONBLOCK)) }   // frees a reader still waiting
            while !thread.isFinished { usleep(5_000) }
            #expect(reader.text == expected)
        }
    }

    /// `import` reads a pipe, a FIFO (waiting for its writer), `/dev/stdin` and a process
    /// substitution, also as root, and a configuration file that is a FIFO never blocks.
    @Test func importsReadEveryKindOfStream() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let export = String(decoding: ExactJSON.data(from: sampleValues), as: UTF8.self)
            try export.write(toFile: cli.path("export.json"), atomically: true, encoding: .utf8)
            let store = cli.json()
            let scripts = [
                "pipe to -": #"cat "$1" | "$ANYDEFAULTS" --store "$2" import --replace -"#,
                "/dev/stdin": #"cat "$1" | "$ANYDEFAULTS" --store "$2" import --replace /dev/stdin"#,
                "/dev/stdin from a file": #""$ANYDEFAULTS" --store "$2" import --replace /dev/stdin < "$1""#,
                "process substitution": #"exec bash -c '"$ANYDEFAULTS" --store "$2" import --replace <(cat "$1")' _ "$1" "$2""#,
                "a FIFO whose writer comes later": #"rm -f "$1.fifo"; mkfifo "$1.fifo"; (sleep 1; cat "$1" > "$1.fifo") & "$ANYDEFAULTS" --store "$2" import --replace "$1.fifo""#,
            ]
            for (name, script) in scripts.sorted(by: { $0.key < $1.key }) {
                try cli.succeed(["--store", store, "delete", "--all"])
                let result = try cli.runShell("set -- '\(cli.path("export.json"))' '\(store)'; " + script)
                #expect(result.status == 0, "\(name): \(result.standardError)")
                #expect(try cli.contents(of: store) == sampleValues, "\(name)")
            }
            // A FIFO as the configuration file, or as the file to import, with no writer: no hang.
            #expect(mkfifo(cli.path("config.fifo"), 0o600) == 0)
            let configured = try cli.runBounded(["keys"], environment: ["ANYDEFAULTS_CONFIG": cli.path("config.fifo")], timeout: .seconds(20))
            #expect(configured.status == 64, "\(configured.standardError)")
        }
    }
}
