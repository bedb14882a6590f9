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
}
