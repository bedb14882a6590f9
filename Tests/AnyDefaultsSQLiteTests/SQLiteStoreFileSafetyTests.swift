@testable import AnyDefaultsSQLite
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files beside a store: a write-ahead log left without its store, a store file replaced
/// while open, links planted where SQLite's files go.
@Suite struct SQLiteStoreFileSafetyTests {
    /// A process died with commits in the `-wal`, then the store file went away: opening must not
    /// create an empty store over the log (SQLite would delete or replay it); the log is kept, and
    /// once the store file is back its commits are there.
    @Test func aWriteAheadLogWithoutItsStoreIsRefusedAndKept() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let child = try ChildProcess.run("SQLiteTestChild", ["crash", path, "kept", "20"])
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

            let (writer, input, output) = try ChildProcess.startConversation("SQLiteTestChild", ["serve", path])
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
            let read = try ChildProcess.run("SQLiteTestChild", ["read", path, "restored.7"])
            #expect(read.standardOutput == "int(7)\n", "\(read.standardError)")
            #expect(try ChildProcess.run("SQLiteTestChild", ["read", path, "lost.3"]).standardOutput == "nil\n")

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
