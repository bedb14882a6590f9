import AnyDefaults
import Foundation
import Testing
import TestSupport

/// The SQLite and LMDB engines' safety through the real executable: files beside a store, files
/// replaced under a running store, locks held by a stopped process, links.
@Suite(.ownThreads) struct EngineSafetyTests {
    /// `read` on a SQLite store whose file is gone but whose `-wal` holds commits: an error, the
    /// log kept, no empty store created.
    @Test func readingAStoreWhoseFileIsGoneButWhoseLogHoldsCommitsFailsAndKeepsTheLog() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = cli.path("store.sqlite")
            let child = try ChildProcess.run("TestChild", ["crash", "sqlite:" + path] + (0..<5).map { "kept.\($0)=\($0)" })
            #expect(child.wasSignaled)
            let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            try FileManager.default.removeItem(atPath: path)
            let result = try cli.run(["--store", "sqlite:" + path, "read"])
            #expect(result.status == 74, "\(result.standardOutput) \(result.standardError)")
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError.contains("-wal"))
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == log)
        }
    }

    /// Restoring a store by renaming a backup over it while `watch` runs on it (and another process
    /// wrote after the backup): every later command reads the restored keys, never the old file's
    /// log applied to the restored one. `scheme` names the backend; `file` the file replaced.
    @Test(arguments: [("sqlite", "store.sqlite"), ("lmdb", "store/data.mdb")])
    func aBackupRenamedOverTheStoreWhileWatchRunsIsWhatLaterCommandsRead(scheme: String, file: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let location = scheme == "sqlite" ? cli.path("store.sqlite") : cli.path("store")
            let store = scheme + ":" + location
            try cli.succeed(["--store", store, "write", "restored", "yes"])
            try cli.succeed(["--store", store, "write", "count", "3", "--type", "int"])
            let backup = cli.path("backup")
            try FileManager.default.copyItem(atPath: cli.path(file), toPath: backup)

            let watcher = try cli.start(["--store", store, "watch", "ready", "lost"])
            #expect(try WatchTests.waitUntilWatching(watcher, cli, store: store))
            try cli.succeed(["--store", store, "write", "lost", "after the backup"])
            try cli.succeed(["--store", store, "write", "count", "4", "--type", "int"])
            #expect(rename(backup, cli.path(file)) == 0)

            let restored = try cli.run(["--store", store, "read", "restored"])
            #expect(restored.status == 0 && restored.standardOutput.contains("yes"), "\(restored.standardError)")
            let count = try cli.run(["--store", store, "read", "count"])
            #expect(count.standardOutput.contains("3"), "\(count.standardOutput) \(count.standardError)")
            let lost = try cli.run(["--store", store, "read", "lost"])
            #expect(lost.status == 1, "\(lost.standardOutput) \(lost.standardError)")
            kill(watcher.process.processIdentifier, SIGINT)
            _ = watcher.finish()
            // Once watch is gone too, the store holds the restored keys alone.
            #expect(try cli.contents(of: store) == ["restored": .string("yes"), "count": .int(3)])
        }
    }

    /// A writer stopped (SIGSTOP) while it holds the store's write lock: `write` from another
    /// process fails with busy (75) after the backend's timeout (5 s) instead of waiting forever,
    /// and `read` is not held up at all.
    @Test(arguments: ["sqlite", "lmdb"])
    func aWriterStoppedHoldingTheWriteLockMakesOtherWritesBusyNotStuck(scheme: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let location = scheme == "sqlite" ? cli.path("store.sqlite") : cli.path("store")
            let store = scheme + ":" + location
            try cli.succeed(["--store", store, "write", "before", "1", "--type", "int"])
            // LMDB: a map that may grow to 4 GiB, and no sync, so that the writer commits fast.
            let holding = scheme == "sqlite" ? store : store + "?maxsize=4GiB&durability=nosync"
            let holder = try #require(
                try StoppedWriter(store: holding) { StoppedWriter.holdsWriteLock(scheme: scheme, location: location) })
            defer { holder.end() }

            let started = ContinuousClock.now
            let writer = try cli.start(["--store", store, "write", "after", "2", "--type", "int"])
            let errors = writer.finish(timeout: .seconds(30))
            #expect(writer.process.terminationReason == .exit, "still waiting after 30 s: killed")
            #expect(writer.process.terminationStatus == 75, "\(errors)")
            #expect(ContinuousClock.now - started < .seconds(20))
            let reader = try cli.start(["--store", store, "read", "before"])
            _ = reader.finish(timeout: .seconds(30))
            #expect(reader.process.terminationStatus == 0)
            #expect(reader.lines == ["1"])
        }
    }

    /// `write` creating an LMDB store on a full disk: storage full (74), not SIGBUS. On a tmpfs
    /// (root only: without it the test fails).
    @Test func creatingAnLMDBStoreOnAFullDiskFailsWithoutASignal() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let disk = try SmallFileSystem(bytes: 1 << 20)
            disk.fill()
            let result = try cli.run(["--store", "lmdb:" + disk.path("store"), "write", "k", "v"])
            #expect(!result.wasSignaled, "died of signal \(result.status)")
            #expect(result.status == 74, "\(result.standardError)")
            #expect(result.standardError.contains("full"))
        }
    }

    /// `delete` on a SQLite store that filled its disk works, and frees room for later writes.
    @Test func deletingKeysFromASQLiteStoreThatFilledTheDiskWorks() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let disk = try SmallFileSystem(bytes: 8 << 20)
            let store = "sqlite:" + disk.path("store.sqlite")
            var count = 0
            while true {
                let value = String(repeating: Character(UnicodeScalar(UInt8(65 + count % 26))), count: 100_000)
                let result = try cli.run(["--store", store, "write", "k\(count)", value])
                if result.status != 0 {
                    #expect(result.status == 74, "\(result.standardError)")
                    break
                }
                count += 1
            }
            #expect(count > 10)
            try cli.succeed(["--store", store, "delete"] + (0..<count / 2).map { "k\($0)" })
            try cli.succeed(["--store", store, "write", "after", "fits again"])
            #expect(try cli.run(["--store", store, "read", "k0"]).status == 1)
        }
    }

    /// A store on a read-only file system (which even root cannot write): every reading command
    /// reads it, and a write is refused with permission denied (77), the files unchanged.
    @Test(arguments: ["sqlite", "lmdb"])
    func aStoreOnAReadOnlyFileSystemIsReadAndRefusesWrites(scheme: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let disk = try SmallFileSystem(bytes: 8 << 20)
            let store = scheme + ":" + disk.path(scheme == "sqlite" ? "store.sqlite" : "store")
            try cli.succeed(["--store", store, "write", "kept", "value"])
            try cli.succeed(["--store", store, "write", "other", "1"])
            try disk.remountReadOnly()
            let files = try FileManager.default.subpathsOfDirectory(atPath: disk.path).sorted()
            #expect(try cli.run(["--store", store, "read", "kept"]).standardOutput.contains("value"))
            let keys = try cli.run(["--store", store, "keys"])
            #expect(keys.status == 0, "\(keys.standardError)")
            #expect(keys.standardOutput.split(separator: "\n").sorted() == ["kept", "other"])
            let export = try cli.run(["--store", store, "export"])
            #expect(export.status == 0, "\(export.standardError)")
            #expect(export.standardOutput.contains("kept"))
            let write = try cli.run(["--store", store, "write", "new", "x"])
            #expect(write.status == 77, "\(write.standardOutput) \(write.standardError)")
            #expect(write.standardError.contains(disk.path))
            let delete = try cli.run(["--store", store, "delete", "kept"])
            #expect(delete.status == 77, "\(delete.standardError)")
            #expect(try FileManager.default.subpathsOfDirectory(atPath: disk.path).sorted() == files)
        }
    }

    /// `write` to a SQLite store whose 240-byte name leaves no room for `-journal` and the files
    /// beside it: refused at once (64), nothing created.
    @Test func aSQLiteStoreNameTooLongForItsFilesIsRefused() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = cli.path(String(repeating: "n", count: 233) + ".sqlite")
            let result = try cli.run(["--store", "sqlite:" + path, "write", "k", "v"])
            #expect(result.status == 64, "\(result.standardError)")
            #expect(result.standardError.contains("too long"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix("nnn") })
        }
    }
}
