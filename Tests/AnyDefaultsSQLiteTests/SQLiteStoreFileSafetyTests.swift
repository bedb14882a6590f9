@testable import AnyDefaultsSQLite
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// The files beside a store: a write-ahead log left without its store, a store file replaced
/// while open, links planted where SQLite's files go.
@Suite struct SQLiteStoreFileSafetyTests {
    /// A process died with commits in the `-wal`, then the store file went away: opening must not
    /// create an empty store over the log (SQLite would delete or replay it); the log is kept, and
    /// once the store file is back its commits are there.
    @Test func aWriteAheadLogWithoutItsStoreIsRefusedAndKept() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let child = try ChildProcess.run("TestChild", ["crash", "sqlite:" + path] + (0..<20).map { "kept.\($0)=\($0)" })
            #expect(child.wasSignaled, "\(child.standardError)")
            let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            #expect(!log.isEmpty)
            try FileManager.default.moveItem(atPath: path, toPath: directory.path("aside.sqlite"))

            let error = #expect(throws: DefaultsError.self) { try SQLiteProvider(path: path) }
            #expect(error?.code == .corrupted)
            #expect(error?.message.contains("-wal") == true)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == log)

            try FileManager.default.moveItem(atPath: directory.path("aside.sqlite"), toPath: path)
            let store = try SQLiteProvider(path: path)
            #expect(try store.value(forKey: "kept.19") == .int(19))
            #expect(try store.keys().count == 20)
        }
    }

    /// A store restored from a copy, file by file (each deleted, then copied back), while its last
    /// commits were only in the `-wal`. The restored files are new files, but a new file often
    /// takes the inode number of one just deleted: here the restored counter file takes the
    /// number of the counter file that recorded which store file the log belongs to, and the
    /// restored store file another. The restored log belongs to the restored store file (they
    /// were copied together) and must be applied, not taken for a replaced file's and set aside.
    @Test func aStoreRestoredFromACopyKeepsWhatItsLogHolds() throws {
        try withTemporaryDirectory { directory in
            // A test running beside this one can create a file in the moment the counter file's
            // number is free and keep it; then no restore gets it back. The scenario starts again
            // in a new folder, up to five times.
            var played = false
            for round in 0..<5 where !played {
                played = try Self.restoreFromACopy(in: directory.path("round-\(round)"))
            }
            #expect(played, "this file system gave the restored counter file another inode number five times")
        }
    }

    /// One round of ``aStoreRestoredFromACopyKeepsWhatItsLogHolds()``: false when the restored
    /// counter file could not take the deleted one's inode number.
    static func restoreFromACopy(in folder: String) throws -> Bool {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/store.sqlite"
        let copy = folder + "/copy"
        let child = try ChildProcess.run("TestChild", ["crash", "sqlite:" + path] + (0..<20).map { "kept.\($0)=\($0)" })
        #expect(child.wasSignaled, "\(child.standardError)")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        let files = ["", "-wal", "-shm", "-counter"]
        for suffix in files { try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + "/store.sqlite" + suffix) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")).count > 0)

        func inode(_ file: String) -> UInt64? { FileID(path: file)?.inode }
        func restore(_ suffix: String) throws {
            // Read first, so the number is free only between the removal and the creation.
            let bytes = try Data(contentsOf: URL(fileURLWithPath: copy + "/store.sqlite" + suffix))
            try FileManager.default.removeItem(atPath: path + suffix)
            #expect(FileManager.default.createFile(atPath: path + suffix, contents: bytes))
        }
        // The counter file: until the restored one has the old one's number.
        let counterNumber = inode(path + "-counter")
        var attempts = 0
        repeat {
            try restore("-counter")
            attempts += 1
        } while inode(path + "-counter") != counterNumber && attempts < 20
        guard inode(path + "-counter") == counterNumber else { return false }
        // The store file: another number than the deleted one's (which a placeholder takes).
        let storeNumber = inode(path)
        try FileManager.default.removeItem(atPath: path)
        #expect(FileManager.default.createFile(atPath: folder + "/placeholder", contents: nil))
        try FileManager.default.copyItem(atPath: copy + "/store.sqlite", toPath: path)
        try #require(inode(path) != storeNumber)
        try restore("-wal")
        try restore("-shm")

        let read = try ChildProcess.run("TestChild", ["get", "sqlite:" + path, "kept.19"])
        #expect(read.standardOutput == "19\n", "\(read.standardError)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".replaced-") }
        #expect(aside.isEmpty, "the restored log was taken for a replaced file's and set aside")
        return true
    }

    /// A backup renamed over a store whose last writer crashed: the crashed file's write-ahead
    /// log must never be applied to the backup, so it is moved aside; when that move fails (the
    /// fault shim fails the rename with EIO), the open is refused, the log is kept byte for byte
    /// and the backup untouched; the next open moves it aside and reads the backup.
    @Test(.enabled(if: FaultShim.isSupported, "the fault shim interposes glibc through LD_PRELOAD: Linux only"))
    func aStaleWriteAheadLogThatCannotBeMovedAsideIsNeverApplied() throws {
        try withTemporaryDirectory { directory in
            let shim = try FaultShim.build(in: directory.path)
            /// A store whose writer crashed (its log holds `lost.*`) with a backup renamed over it.
            func prepare(_ name: String) throws -> String {
                let folder = directory.path(name)
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let path = folder + "/store.sqlite"
                let crashed = try ChildProcess.run("TestChild", ["crash", "sqlite:" + path] + (0..<20).map { "lost.\($0)=\($0)" })
                #expect(crashed.wasSignaled, "\(crashed.standardError)")
                let backup = try SQLiteProvider(path: folder + "/backup.sqlite")
                try backup.setValue(.int(7), forKey: "restored")
                backup.close()
                #expect(rename(folder + "/backup.sqlite", path) == 0)
                return path
            }
            // Which counted call is the move aside: an open of a store prepared the same way.
            let counting = try prepare("counting")
            let log = directory.path("calls.log")
            let counted = try ChildProcess.run(
                "TestChild", ["get", "sqlite:" + counting, "restored"], environment: shim.environment(watching: directory.path("counting"), log: log))
            #expect(counted.standardOutput == "7\n", "\(counted.standardError)")
            let moves = FaultShim.calls(inLog: log)
                .filter { $0.function.hasPrefix("rename") && $0.target.contains("-wal") }
            guard let move = moves.first else {
                Issue.record("no rename of the -wal among the calls: \(FaultShim.calls(inLog: log))")
                return
            }

            let path = try prepare("failing")
            let staleLog = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            let stored = try Data(contentsOf: URL(fileURLWithPath: path))
            let failed = try ChildProcess.run(
                "TestChild", ["get", "sqlite:" + path, "restored"],
                environment: shim.environment(watching: directory.path("failing"), log: directory.path("failing.log"), failing: move.number))
            #expect(failed.status != 0 && failed.standardError.contains("-wal"), "\(failed)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == staleLog, "the stale log is kept")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == stored, "the backup is untouched")

            let store = try SQLiteProvider(path: path)
            #expect(try store.value(forKey: "restored") == .int(7))
            #expect(try store.value(forKey: "lost.3") == nil, "the stale log was never applied")
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path("failing")).filter { $0.contains("-wal.replaced-") }
            #expect(aside.count == 1)
            if let name = aside.first {
                #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path("failing") + "/" + name)) == staleLog)
            }
        }
    }

    /// A backup restored by renaming it over the store while another process has the store open,
    /// writing and watching: the restored keys are there for every reader, the old process's
    /// write-ahead log is never applied to the restored file, and the old process's next writes go
    /// to the restored file.
    @Test func aBackupRenamedOverTheStoreWhileAnotherProcessWritesIsWhatEveryoneReads() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let backup = directory.path("backup.sqlite")
            do {
                let store = try SQLiteProvider(path: path)
                try store.apply((0..<20).map { .set("restored.\($0)", .int(Int64($0))) })
                store.close()
            }
            try FileManager.default.copyItem(atPath: path, toPath: backup)

            let (writer, input, output) = try ChildProcess.startConversation("TestChild", ["serve", "sqlite:" + path])
            defer {
                try? input.close()
                writer.waitUntilExit()
            }
            #expect(try output.readLine() == "ready")
            // Written after the backup: in the log and the file the restore replaces.
            for index in 0..<50 {
                try input.write(contentsOf: Data("lost.\(index)=\(index)\n".utf8))
                #expect(try output.readLine() == "ok")
            }
            #expect(rename(backup, path) == 0)

            // Another process reads the restored file.
            let read = try ChildProcess.run("TestChild", ["get", "sqlite:" + path, "restored.7"])
            #expect(read.standardOutput == "7\n", "\(read.standardError)")
            #expect(try ChildProcess.run("TestChild", ["get", "sqlite:" + path, "lost.3"]).standardOutput == "nil\n")

            // The writer's next write goes to the restored file.
            try input.write(contentsOf: Data("after=1\n".utf8))
            #expect(try output.readLine() == "ok")
            let store = try SQLiteProvider(path: path)
            #expect(try store.value(forKey: "after") == .int(1))
            #expect(try store.value(forKey: "restored.19") == .int(19))
            #expect(try store.value(forKey: "lost.49") == nil)
            #expect(try store.keys().count == 21)
        }
    }

    /// A write that waits for the write lock while a backup is renamed over the store is made in
    /// the restored file, not in the replaced one (which is then unlinked, taking the write with
    /// it): once it holds the lock, a write checks the file again.
    @Test func aWriteWaitingForTheLockWhileTheStoreIsReplacedLandsInTheNewFile() async throws {
        #if os(Linux)
        try await withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let backup = directory.path("backup.sqlite")
            do {
                let store = try SQLiteProvider(path: path)
                try store.setValue(.string("backup"), forKey: "state")
                store.close()
            }
            try FileManager.default.copyItem(atPath: path, toPath: backup)
            // Kept open, so that `-shm` stays the file the child locks.
            let keeper = try SQLiteProvider(path: path)
            try keeper.setValue(.string("replaced"), forKey: "state")
            let writer = try SQLiteProvider(path: path, busyTimeout: .seconds(60))
            _ = try writer.value(forKey: "state")

            let holder = try LockHoldingChild(store: "sqlite:" + path)
            defer { holder.end() }
            #expect(holder.isHolding)
            // On a thread of its own: the write waits for the lock, and a cooperative thread held
            // by it (two such tests at once on two cores) would keep this test from ending the wait.
            let write = Task { try await BlockingWork.run { try writer.setValue(.int(1), forKey: "waited") } }
            // Long enough for the write to pass its first look at the file and wait for the lock
            // (were it not waiting yet, it would open the new file at once: the test still holds).
            try await Task.sleep(for: .milliseconds(500))
            #expect(rename(backup, path) == 0)
            holder.end()
            try await write.value

            let read = try ChildProcess.run("TestChild", ["get", "sqlite:" + path, "waited"])
            #expect(read.standardOutput == "1\n", "\(read.standardError)")
            #expect(try ChildProcess.run("TestChild", ["get", "sqlite:" + path, "state"]).standardOutput == "\"backup\"\n")
            keeper.close()
            writer.close()
        }
        #endif
    }

    /// In one process, two instances on the store and a cache in front of one: after the file is
    /// replaced, a write through either opens the new file, and both (and the cache) read it.
    @Test func instancesInOneProcessAllMoveToTheReplacingFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let backup = directory.path("backup.sqlite")
            do {
                let store = try SQLiteProvider(path: path)
                try store.setValue(.string("backup"), forKey: "state")
                store.close()
            }
            try FileManager.default.copyItem(atPath: path, toPath: backup)
            let first = try SQLiteProvider(path: path)
            let second = try SQLiteProvider(path: path)
            let cache = first.cached()
            try cache.setValue(.string("live"), forKey: "state")
            #expect(try second.value(forKey: "state") == .string("live"))
            #expect(rename(backup, path) == 0)
            try second.setValue(.int(1), forKey: "after")
            #expect(try cache.value(forKey: "state") == .string("backup"))
            #expect(try first.value(forKey: "after") == .int(1))
            #expect(try first.keys().sorted() == ["after", "state"])
            // The replaced file's log was never applied here, nor left for the new file.
            first.close()
            second.close()
            let reopened = try SQLiteProvider(path: path)
            #expect(try reopened.allValues() == ["state": .string("backup"), "after": .int(1)])
        }
    }
}

/// Links planted where a store's files belong, and the owner of the files root creates.
@Suite struct SQLiteSidecarFileTests {
    /// A symbolic link where SQLite's write-ahead log or shared-memory index, or the library's
    /// counter, belongs: the store refuses it (SQLite opens its files without following links; the
    /// library does the same), the file it points to is never written.
    @Test(arguments: ["-wal", "-shm", "-counter"])
    func aLinkPlantedBesideTheStoreIsRefusedAndItsTargetUntouched(suffix: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.int(1), forKey: "before")
            let victim = directory.path("victim")
            try Data("victim".utf8).write(to: URL(fileURLWithPath: victim))
            try? FileManager.default.removeItem(atPath: path + suffix)
            #expect(symlink(victim, path + suffix) == 0)
            let error = #expect(throws: DefaultsError.self) {
                let store = try SQLiteProvider(path: path)
                try store.setValue(.int(2), forKey: "after")
            }
            #expect(error?.code == .permissionDenied, "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("victim".utf8))
        }
    }

    /// A link where the rollback journal or the reserve belongs (files SQLite or the store may
    /// make, delete or truncate): nothing is written through it, and the store works or refuses.
    @Test(arguments: ["-journal", "-reserve"])
    func aLinkPlantedWhereAJournalOrTheReserveBelongsIsNeverWrittenThrough(suffix: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.int(1), forKey: "before")
            let victim = directory.path("victim")
            try Data("victim".utf8).write(to: URL(fileURLWithPath: victim))
            try? FileManager.default.removeItem(atPath: path + suffix)
            #expect(symlink(victim, path + suffix) == 0)
            do throws(DefaultsError) {
                let store = try SQLiteProvider(path: path)
                try store.setValue(.int(2), forKey: "after")
                try store.removeValue(forKey: "before")
                #expect(try store.value(forKey: "after") == .int(2))
            } catch {
                #expect(error.code == .permissionDenied, "\(error)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("victim".utf8))
        }
    }

    /// Root writing a user's store: every file it creates beside the store belongs to the store's
    /// owner and has its mode, so the user can still open the store.
    @Test(.enabled(if: geteuid() == 0)) func filesRootCreatesBesideAUsersStoreKeepTheStoresOwner() throws {
        try withTemporaryDirectory { directory in
            let folder = directory.path("user")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            #expect(chown(folder, 65534, 65534) == 0)
            let path = folder + "/store.sqlite"
            let created = try ChildProcess.run("TestChild", ["open", "sqlite:" + path, "--unprivileged"])
            #expect(created.standardOutput == "ok\n", "\(created.standardError)")
            let store = try SQLiteProvider(path: path)
            try store.setValue(.int(1), forKey: "by root")
            let files = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(Set(files).isSuperset(of: ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "store.sqlite-counter"]))
            for file in files {
                var info = stat()
                #expect(lstat(folder + "/" + file, &info) == 0)
                #expect(info.st_uid == 65534, "\(file) is owned by \(info.st_uid)")
                #expect(info.st_mode & 0o077 == 0, "\(file) has mode \(String(info.st_mode & 0o777, radix: 8))")
            }
            store.close()
            #expect(try ChildProcess.run("TestChild", ["open", "sqlite:" + path, "--unprivileged"]).standardOutput == "ok\n")
        }
    }
}

/// Store file names as long as the file system allows, and longer.
@Suite struct SQLiteNameLengthTests {
    /// A name that fits, but whose files beside it (`-wal.replaced-…`, `-journal`, `-counter`)
    /// would not, is refused at open with `invalidConfiguration`, and nothing is created; the
    /// longest name that leaves room for them works, through every file.
    @Test func aNameTooLongForTheFilesBesideItIsRefusedAtOpen() throws {
        try withTemporaryDirectory { directory in
            let limit = Int(pathconf(directory.path, Int32(_PC_NAME_MAX)))
            let fits = directory.path(String(repeating: "a", count: limit - SQLiteSidecars.longestSuffix))
            let store = try SQLiteProvider(path: fits)
            try store.setValue(.int(1), forKey: "k")
            #expect(try store.value(forKey: "k") == .int(1))
            #expect(FileManager.default.fileExists(atPath: fits + "-counter"))
            #expect(FileManager.default.fileExists(atPath: fits + "-wal"))
            for length in [limit - SQLiteSidecars.longestSuffix + 1, limit - 8, limit] {
                let name = directory.path(String(repeating: "b", count: length))
                let error = #expect(throws: DefaultsError.self) { try SQLiteProvider(path: name) }
                #expect(error?.code == .invalidConfiguration, "\(String(describing: error))")
                #expect(error?.path == name)
                #expect(!FileManager.default.fileExists(atPath: name))
            }
        }
    }

    /// A store opened through a symbolic link keeps every file beside the file the link leads to,
    /// as SQLite keeps its journals: one change counter and one reserve for every spelling of the
    /// store (two counters would let one spelling's cache miss the other's commits), and its
    /// identity names them all, so that nothing is written over them.
    @Test func aStoreOpenedThroughALinkKeepsItsFilesBesideTheFileItLeadsTo() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory.path("a"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: directory.path("b"), withIntermediateDirectories: true)
            let target = directory.path("a/t.sqlite"), link = directory.path("b/l.sqlite")
            let direct = try SQLiteProvider(path: target)
            try direct.setValue(.int(1), forKey: "k")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../a/t.sqlite")
            let linked = try SQLiteProvider(path: link).cached()
            #expect(try linked.value(forKey: "k") == .int(1))
            try linked.setValue(.int(2), forKey: "k")
            #expect(try direct.value(forKey: "k") == .int(2))
            for suffix in ["-wal", "-shm", "-counter", "-reserve"] {
                #expect(FileManager.default.fileExists(atPath: target + suffix), "\(suffix)")
                #expect(!FileManager.default.fileExists(atPath: link + suffix), "\(suffix) beside the link")
            }
            let identity = SQLiteProvider.storeIdentity(path: link)
            for suffix in ["", "-wal", "-shm", "-counter", "-reserve"] {
                #expect(identity.contains(file: target + suffix), "\(suffix)")
            }
            #expect(identity.overlaps(SQLiteProvider.storeIdentity(path: target)))
        }
    }
}
