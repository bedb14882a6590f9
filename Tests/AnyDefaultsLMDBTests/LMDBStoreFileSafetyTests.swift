@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// The files of an LMDB store replaced or planted while it is in use.
@Suite struct LMDBStoreFileSafetyTests {
    /// A backup of `data.mdb` restored by renaming it over the live one while another process has
    /// the store open, writing and watching: every reader sees the restored keys (never with the
    /// replaced file's lock table), and the other process's next write goes to the restored file.
    @Test func aBackupRenamedOverTheDataFileWhileAnotherProcessWritesIsWhatEveryoneReads() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            do {
                let store = try LMDBProvider(path: path)
                try store.apply((0..<20).map { .set("restored.\($0)", .int(Int64($0))) })
                store.close()
            }
            let backup = directory.path("backup.mdb")
            try FileManager.default.copyItem(atPath: path + "/data.mdb", toPath: backup)

            let (writer, input, output) = try ChildProcess.startConversation("TestChild", ["serve", "lmdb:" + path])
            defer {
                try? input.close()
                writer.waitUntilExit()
            }
            #expect(try output.readLine() == "ready")
            for index in 0..<50 {
                try input.write(contentsOf: Data("lost.\(index)=\(index)\n".utf8))
                #expect(try output.readLine() == "ok")
            }
            #expect(rename(backup, path + "/data.mdb") == 0)

            let reader = try LMDBProvider(path: path)
            #expect(try reader.value(forKey: "restored.7") == .int(7))
            #expect(try reader.value(forKey: "lost.3") == nil)
            reader.close()

            try input.write(contentsOf: Data("after=1\n".utf8))
            #expect(try output.readLine() == "ok")
            let store = try LMDBProvider(path: path)
            defer { store.close() }
            #expect(try store.value(forKey: "after") == .int(1))
            #expect(try store.value(forKey: "restored.19") == .int(19))
            #expect(try store.keys().count == 21)
        }
    }

    /// A write that waits for the write lock (another process holds it) while a backup is
    /// renamed over `data.mdb` is made in the restored file, not in the replaced one, which is
    /// then gone with the write: once it holds the lock, a write that waited checks the file again.
    @Test func aWriteWaitingForTheLockWhileTheDataFileIsReplacedLandsInTheNewFile() async throws {
        #if os(Linux)
        try await withTemporaryDirectory { directory in
            let path = directory.path("store")
            let backup = directory.path("backup.mdb")
            do {
                let store = try LMDBProvider(path: path)
                try store.setValue(.string("backup"), forKey: "state")
                store.close()
            }
            try FileManager.default.copyItem(atPath: path + "/data.mdb", toPath: backup)
            let writer = try LMDBProvider(path: path, options: .init(lockTimeout: .seconds(60)))
            defer { writer.close() }
            try writer.setValue(.string("replaced"), forKey: "state")

            let holder = try LockHoldingChild(store: "lmdb:" + path)
            defer { holder.end() }
            #expect(holder.isHolding)
            // On a thread of its own: the write waits for the lock, and a cooperative thread held
            // by it (two such tests at once on two cores) would keep this test from ending the wait.
            let write = Task { try await BlockingWork.run { try writer.setValue(.int(1), forKey: "waited") } }
            // Long enough for the write to pass its first look at the file and wait for the lock
            // (were it not waiting yet, it would open the new file at once: the test still holds).
            try await Task.sleep(for: .milliseconds(500))
            #expect(rename(backup, path + "/data.mdb") == 0)
            holder.end()
            try await write.value

            let read = try ChildProcess.run("TestChild", ["get", "lmdb:" + path, "waited"])
            #expect(read.standardOutput == "1\n", "\(read.standardError)")
            #expect(try ChildProcess.run("TestChild", ["get", "lmdb:" + path, "state"]).standardOutput == "\"backup\"\n")
        }
        #endif
    }

    /// In one process: a provider whose data file is replaced opens the new one on its next call.
    @Test func aProviderOpensTheNewDataFileOnItsNextWrite() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let backup = directory.path("backup.mdb")
            do {
                let store = try LMDBProvider(path: path)
                try store.setValue(.string("backup"), forKey: "state")
                store.close()
            }
            try FileManager.default.copyItem(atPath: path + "/data.mdb", toPath: backup)
            let store = try LMDBProvider(path: path)
            defer { store.close() }
            let cache = store.cached()
            try cache.setValue(.string("live"), forKey: "state")
            #expect(try cache.value(forKey: "state") == .string("live"))
            #expect(rename(backup, path + "/data.mdb") == 0)
            try store.setValue(.int(1), forKey: "after")
            #expect(try cache.value(forKey: "state") == .string("backup"))
            #expect(try store.keys().sorted() == ["after", "state"])
        }
    }
}

/// Links planted where an LMDB store's files belong, and the owner of the files root creates.
@Suite struct LMDBSidecarFileTests {
    /// A symbolic link where `lock.mdb`, `data.mdb` or the counter belongs: refused with
    /// `permissionDenied`; LMDB would otherwise write its lock table or data through it.
    @Test(arguments: ["lock.mdb", "data.mdb", "counter"])
    func aLinkPlantedInTheStoreIsRefusedAndItsTargetUntouched(name: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let victim = directory.path("victim")
            try Data("victim".utf8).write(to: URL(fileURLWithPath: victim))
            #expect(symlink(victim, path + "/" + name) == 0)
            let error = #expect(throws: DefaultsError.self) { try LMDBProvider(path: path).setValue(.int(1), forKey: "k") }
            #expect(error?.code == .permissionDenied, "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("victim".utf8))
        }
    }

    /// Root writing a user's store: `data.mdb`, `lock.mdb` and the counter belong to the
    /// directory's owner and are owner-only, so the user can still open the store.
    @Test(.enabled(if: geteuid() == 0)) func filesRootCreatesInAUsersStoreKeepTheDirectorysOwner() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            #expect(chown(path, 65534, 65534) == 0)
            let store = try LMDBProvider(path: path)
            try store.setValue(.int(1), forKey: "by root")
            store.close()
            for file in ["data.mdb", "lock.mdb", "counter"] {
                var info = stat()
                #expect(lstat(path + "/" + file, &info) == 0)
                #expect(info.st_uid == 65534, "\(file) is owned by \(info.st_uid)")
                #expect(info.st_mode & 0o777 == 0o600, "\(file) has mode \(String(info.st_mode & 0o777, radix: 8))")
            }
            let opened = try ChildProcess.run("TestChild", ["open", "lmdb:" + path, "--unprivileged"])
            #expect(opened.standardOutput == "ok\n", "\(opened.standardOutput) \(opened.standardError)")
        }
    }
}
