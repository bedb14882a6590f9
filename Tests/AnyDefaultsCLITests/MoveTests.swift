import AnyDefaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// `migrate` and `migrate --move`: a move deletes from its source only what it copied and what
/// is still unchanged, never into a store that does not persist, and never onto the source itself
/// reached by another spelling.
@Suite(.ownThreads) struct MoveTests {
    // MARK: Destinations that do not persist

    @Test(arguments: StoreKind.persistent)
    func aMoveIntoMemoryIsRefusedAndTheSourceKeepsEverything(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let source = kind.store(cli)
            try cli.fill(source, with: sampleValues)
            for destination in ["memory:", "memory:?cache=on"] {
                let result = try cli.run(["--store", source, "migrate", "--to", destination, "--move"])
                #expect(result.status == 64, "\(result.standardError)")
                #expect(result.standardError.contains("does not persist"), "\(result.standardError)")
                #expect(try cli.contents(of: source) == sampleValues)
            }
            // A copy is harmless: it deletes nothing.
            try cli.succeed(["--store", source, "migrate", "--to", "memory:"])
            #expect(try cli.contents(of: source) == sampleValues)
        }
    }

    // MARK: The same store by another name

    /// One way to reach a store by another spelling.
    struct Alias: Sendable, CustomTestStringConvertible {
        var kind: StoreKind
        var name: String
        /// Makes the alias in the sandbox and returns the destination store string and the
        /// environment it needs; `cleanup` undoes what must be undone (a mount).
        var make: @Sendable (CLI, StoreKind) throws -> (store: String, environment: [String: String], cleanup: @Sendable () -> Void)

        var testDescription: String { "\(kind.scheme): by \(name)" }
    }

    static func aliases() -> [Alias] {
        func path(_ name: String, _ make: @escaping @Sendable (_ cli: CLI, _ location: String) throws -> String) -> [Alias] {
            StoreKind.pathBased.map { kind in
                Alias(kind: kind, name: name) { cli, kind in
                    (kind.store(cli, location: try make(cli, kind.location(cli))), [:], {})
                }
            }
        }
        @Sendable func name(_ location: String) -> String { (location as NSString).lastPathComponent }
        @Sendable func folder(_ location: String) -> String { (location as NSString).deletingLastPathComponent }
        var all: [Alias] = []
        all += path("a symbolic link") { cli, location in
            try FileManager.default.createSymbolicLink(atPath: cli.path("alias"), withDestinationPath: location)
            return cli.path("alias")
        }
        all += path("a chain of relative symbolic links") { cli, location in
            try FileManager.default.createSymbolicLink(atPath: cli.path("first"), withDestinationPath: "second")
            try FileManager.default.createSymbolicLink(atPath: cli.path("second"), withDestinationPath: name(location))
            return cli.path("first")
        }
        all += path("..") { cli, location in
            try FileManager.default.createDirectory(atPath: cli.path("sub"), withIntermediateDirectories: true)
            return folder(location) + "/sub/../" + name(location)
        }
        all += path(".") { _, location in folder(location) + "/./" + name(location) }
        all += path("//") { _, location in folder(location) + "//" + name(location) }
        all += path("a relative path") { _, location in relativePath(to: location) }
        all += path("a linked directory") { cli, location in
            try FileManager.default.createSymbolicLink(atPath: cli.path("linked"), withDestinationPath: folder(location))
            return cli.path("linked/" + name(location))
        }
        all += [StoreKind.json, .sqlite].map { kind in
            Alias(kind: kind, name: "a hard link") { cli, kind in
                try FileManager.default.linkItem(atPath: kind.location(cli), toPath: cli.path("hard"))
                return (kind.store(cli, location: cli.path("hard")), [:], {})
            }
        }
        all.append(Alias(kind: .lmdb, name: "a trailing slash") { cli, kind in (kind.store(cli, location: kind.location(cli) + "/"), [:], {}) })
        all += StoreKind.pathBased.map { kind in
            Alias(kind: kind, name: "~") { cli, kind in
                (kind.store(cli, location: "~/" + name(kind.location(cli))), ["HOME": folder(kind.location(cli))], {})
            }
        }
        if geteuid() == 0 {
            all += StoreKind.pathBased.map { kind in
                Alias(kind: kind, name: "a bind mount") { cli, kind in
                    let mountPoint = cli.path("mounted")
                    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
                    let mount = try ChildProcessShell.run("mount --bind '\(folder(kind.location(cli)))' '\(mountPoint)'")
                    try #require(mount.status == 0, "mount --bind: \(mount.standardError)")
                    return (kind.store(cli, location: mountPoint + "/" + name(kind.location(cli))), [:], {
                        _ = try? ChildProcessShell.run("umount -l '\(mountPoint)'")
                    })
                }
            }
        }
        #if os(macOS)
        all += StoreKind.pathBased.map { kind in
            Alias(kind: kind, name: "another case") { cli, kind in
                (kind.store(cli, location: folder(kind.location(cli)) + "/" + name(kind.location(cli)).uppercased()), [:], {})
            }
        }
        #endif
        // Different backends sharing files: a store written onto another one's journal or lock.
        all.append(Alias(kind: .sqlite, name: "a JSON store on its -wal") { cli, kind in ("json:" + kind.location(cli) + "-wal", [:], {}) })
        all.append(Alias(kind: .json, name: "a JSON store on its lock file") { cli, kind in ("json:" + kind.location(cli) + ".lock", [:], {}) })
        all.append(Alias(kind: .lmdb, name: "a JSON store on its data.mdb") { cli, kind in ("json:" + kind.location(cli) + "/data.mdb", [:], {}) })
        all.append(Alias(kind: .userDefaults, name: "a JSON store on its property list") { cli, kind in ("json:" + kind.dataFile(cli), [:], {}) })
        return all
    }

    @Test(arguments: aliases())
    func aStoreReachedByAnotherPathIsRefusedAsItsOwnDestination(_ alias: Alias) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let source = alias.kind.store(cli)
            try cli.fill(source, with: sampleValues)
            let data = FileManager.default.contents(atPath: alias.kind.dataFile(cli))
            let (destination, environment, cleanup) = try alias.make(cli, alias.kind)
            defer { cleanup() }
            for move in [false, true] {
                let result = try cli.run(["--store", source, "migrate", "--to", destination] + (move ? ["--move"] : []), environment: environment)
                #expect(result.status == 64, "\(destination) move=\(move): \(result.standardError)")
                #expect(result.standardError.contains("same store"), "\(result.standardError)")
                #expect(try cli.contents(of: source) == sampleValues, "\(destination) move=\(move)")
                #expect(FileManager.default.contents(atPath: alias.kind.dataFile(cli)) == data, "the data file changed")
            }
        }
    }

    @Test func twoDifferentStoresAreNotTheSame() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            for kind in StoreKind.persistent {
                let source = kind.store(cli, "a")
                let destination = kind.store(cli, "b")
                try cli.fill(source, with: sampleValues)
                try cli.succeed(["--store", source, "migrate", "--to", destination, "--move"])
                #expect(try cli.holdsNothing(source), "\(kind.scheme)")
                #expect(try cli.contents(of: destination) == sampleValues, "\(kind.scheme)")
            }
        }
    }

    // MARK: Moves while others write

    /// Writers in other processes keep writing to the source while moves run one after another:
    /// every write a writer saw acknowledged ends up, with its last value, in the source or (when
    /// the source no longer has the key) in the destination.
    @Test(arguments: StoreKind.persistent)
    func aMoveDeletesOnlyWhatItCopiedUnchanged(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let source = kind.store(cli, "source")
            let destination = kind.store(cli, "destination")
            try cli.fill(source, with: ["seed": .int(0)])
            let stop = cli.path("stop")
            let writerCount = 3
            let slots = 4
            var writers: [(Process, Pipe)] = []
            for id in 0..<writerCount {
                let (process, output, _) = try ChildProcess.start(
                    "TestChild", ["keep-writing", source, "\(id)", "\(slots)", stop], environment: cli.environment)
                writers.append((process, output))
            }
            let outputs = writers.map { Collected(reading: $0.1.fileHandleForReading) }
            var moves = 0
            var keptNote = 0
            let deadline = ContinuousClock.now + .seconds(4)
            while ContinuousClock.now < deadline || moves < 5 {
                let result = try cli.run(["--store", source, "migrate", "--to", destination, "--move"])
                #expect(result.status == 0, "move \(moves): \(result.standardError)")
                if result.standardError.contains("changed in the source during the move") { keptNote += 1 }
                moves += 1
            }
            try Data().write(to: URL(fileURLWithPath: stop))
            for (process, _) in writers { process.waitUntilExit() }
            for output in outputs { while !output.finished.withLock({ $0 }) { usleep(5_000) } }

            // The last acknowledged value of every key each writer wrote.
            var expected: [String: DefaultsValue] = [:]
            for (id, output) in outputs.enumerated() {
                let lines = output.text.split(separator: "\n")
                #expect(lines.last == "done", "writer \(id) did not finish cleanly")
                for line in lines where line.hasPrefix("ack ") {
                    let fields = line.split(separator: " ")
                    guard fields.count == 3, let number = Int64(fields[2]) else { continue }
                    expected[String(fields[1])] = .int(number)
                }
            }
            let inSource = try cli.contents(of: source)
            let inDestination = try cli.contents(of: destination)
            var lost: [String] = []
            for (key, value) in expected.sorted(by: { $0.key < $1.key }) {
                let found = inSource[key] ?? inDestination[key]
                if found != value { lost.append("\(key): expected \(value), found \(found.map { "\($0)" } ?? "nothing")") }
            }
            #expect(lost.isEmpty, "\(lost.count) acknowledged writes lost in \(moves) moves: \(lost.prefix(10))")
            #expect(!expected.isEmpty && moves >= 5)
            print("\(kind.scheme): \(moves) moves, \(expected.count) keys, \(keptNote) moves kept changed keys, \(lost.count) lost")
        }
    }
}

/// `/bin/sh -c` for the few set-up steps a test makes with system tools (`mount`).
enum ChildProcessShell {
    static func run(_ script: String) throws -> ChildProcess.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let error = Pipe()
        process.standardError = error
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ChildProcess.Result(
            status: process.terminationStatus, standardOutput: "", standardError: String(decoding: data, as: UTF8.self),
            wasSignaled: process.terminationReason == .uncaughtSignal)
    }
}
