import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Temporary files: an export interrupted by SIGTERM, SIGINT or SIGHUP removes its own, and the
/// ones a process that died left behind are removed the next time the output or store is opened,
/// but only those that are certainly abandoned.
@Suite(.ownThreads) struct TemporaryFileTests {
    static func temporaryFiles(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") }
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func anInterruptedExportRemovesItsTemporaryFile(_ signal: Int32) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            // A store large enough that writing its export takes a while.
            let big = String(repeating: "0123456789abcdef", count: 3 << 20)
            try Data(#"{"big": "\#(big)"}"#.utf8).write(to: URL(fileURLWithPath: cli.path("store.json")))
            let exportDirectory = cli.path("out")
            try FileManager.default.createDirectory(atPath: exportDirectory, withIntermediateDirectories: true)
            let output = exportDirectory + "/export.json"
            let old = Data("old\n".utf8)
            var caught = 0
            for _ in 0..<5 where caught == 0 {
                try old.write(to: URL(fileURLWithPath: output))
                let running = try cli.start(["--store", cli.json(), "export", "--output", output])
                let deadline = ContinuousClock.now + .seconds(60)
                while running.process.isRunning, ContinuousClock.now < deadline, try Self.temporaryFiles(in: exportDirectory).isEmpty {
                    usleep(500)
                }
                if running.process.isRunning { kill(running.process.processIdentifier, signal) }
                _ = running.finish(timeout: .seconds(30))
                if running.process.terminationStatus == 128 + signal { caught += 1 }
                #expect(try Self.temporaryFiles(in: exportDirectory) == [])
                // The output is the old file or the complete new one.
                let now = try Data(contentsOf: URL(fileURLWithPath: output))
                #expect(now == old || (try? ExactJSON.store(from: now))?["big"] == .string(big))
            }
            #expect(caught > 0, "no run was caught while writing")
        }
    }

    /// Plants files named like temporary files of `target` in its directory: those that must go
    /// (abandoned) and those that must stay. Returns the names that must stay, and the descriptor
    /// that keeps one locked (close it afterwards).
    static func plant(beside target: String) throws -> (keep: Set<String>, remove: Set<String>, lock: Int32) {
        let directory = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        let dead = try ChildProcess.endedProcessIdentifier()
        let old = Date(timeIntervalSinceNow: -120)
        func make(_ file: String, modified: Date = old) throws -> String {
            try Data("partial".utf8).write(to: URL(fileURLWithPath: directory + "/" + file))
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: directory + "/" + file)
            return file
        }
        var keep: Set<String> = []
        var remove: Set<String> = []
        remove.insert(try make(".\(name).tmp-\(dead)-abandoned"))
        keep.insert(try make(".\(name).tmp-\(getpid())-alive"))
        // Fresh: modified less than the abandoned age before the cleanup, however slowly the
        // command starts on a loaded machine.
        keep.insert(try make(".\(name).tmp-\(dead)-fresh", modified: Date().addingTimeInterval(60)))
        keep.insert(try make(".other-\(name).tmp-\(dead)-another-file"))
        let locked = try make(".\(name).tmp-\(dead)-locked")
        keep.insert(locked)
        let lock = open(directory + "/" + locked, O_RDONLY)
        #expect(flock(lock, LOCK_EX) == 0)
        try FileManager.default.createSymbolicLink(atPath: directory + "/.\(name).tmp-\(dead)-link", withDestinationPath: "/etc/hostname")
        keep.insert(".\(name).tmp-\(dead)-link")
        if geteuid() == 0 {
            let foreign = try make(".\(name).tmp-\(dead)-foreign")
            #expect(chown(directory + "/" + foreign, 65534, 65534) == 0)
            keep.insert(foreign)
        }
        return (keep, remove, lock)
    }

    /// Where a process that died leaves temporary files, and the command that opens that place next.
    static let places: [(name: String, target: @Sendable (CLI) -> String, open: @Sendable (CLI) -> [String])] = [
        ("an export", { $0.path("export.json") }, { ["--store", "memory:", "export", "--output", $0.path("export.json")] }),
        // The stores do not exist yet: `write` opens (and creates) them; a reading command would
        // find no such store and open nothing.
        ("a JSON store", { $0.path("store.json") }, { ["--store", $0.json(), "write", "k", "v"] }),
        ("a UserDefaults suite", { $0.path("config/com.example.tmp.plist") }, { _ in ["--store", "userdefaults:com.example.tmp", "write", "k", "v"] }),
    ]

    @Test func abandonedTemporaryFilesAreRemovedAndNothingElse() throws {
        for place in Self.places {
            try withTemporaryDirectory { directory in
                let cli = try CLI(directory)
                let (keep, remove, lock) = try Self.plant(beside: place.target(cli))
                defer { close(lock) }
                try cli.succeed(place.open(cli))
                let left = Set(try Self.temporaryFiles(in: (place.target(cli) as NSString).deletingLastPathComponent))
                #expect(left == keep, "\(place.name): left \(left.sorted()), removed should be \(remove.sorted())")
            }
        }
    }
}
