import AnyDefaults
import Foundation
import Testing
import TestSupport

/// A store whose directory is removed and made again while a process observes it (a restore, a
/// cleanup script): the observer hears the old keys go, then another process's writes to the
/// store now at the path. (The files the store holds open keep the kernel from reporting the old
/// directory's removal until the store is closed; SQLite and LMDB keep reading the old files
/// until they notice and open the path again.)
@Suite(.ownThreads) struct DirectoryReplacementTests {
    @Test(arguments: ["json", "sqlite", "lmdb"])
    func aStoreObservedWhileItsDirectoryIsRemovedAndMadeAgainIsFollowed(_ scheme: String) async throws {
        let values = try await BlockingWork.run { () throws -> [DefaultsValue?] in
            try withTemporaryDirectory { directory in
                let folder = directory.path("d")
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let store = "\(scheme):" + folder + "/store.\(scheme)"
                let provider = try Defaults(url: store + "?cache=off").provider
                let events = EventLog(provider)
                try provider.setValue(.int(1), forKey: "k")
                try FileManager.default.removeItem(atPath: folder)
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for value in 2...3 {
                    let result = try ChildProcess.run("anydefaults", ["--store", store, "write", "k", "\(value)", "--type", "int"])
                    guard result.status == 0 else { throw DefaultsError(.ioFailure, "anydefaults write: \(result.standardError)", backend: "test") }
                    _ = waitUntil { events.all.last?.newValue == .int(Int64(value)) }
                }
                return events.all.filter { $0.key == "k" }.map(\.newValue)
            }
        }
        // The removal is heard unless the new store was there before the old one's loss was noticed.
        let (one, two, three) = (DefaultsValue?.some(.int(1)), DefaultsValue?.some(.int(2)), DefaultsValue?.some(.int(3)))
        #expect(values == [one, nil, two, three] || values == [one, two, three], "\(values)")
    }

    /// A backup renamed over the data file of an observed SQLite or LMDB store: observers hear
    /// how the restored file differs from the one they knew.
    @Test(arguments: ["sqlite", "lmdb"])
    func observersOfAStoreHearWhatABackupRenamedOverItChanged(_ scheme: String) async throws {
        let events = try await BlockingWork.run { () throws -> [String] in
            try withTemporaryDirectory { directory in
                let (store, backup) = (directory.path("store.\(scheme)"), directory.path("backup.\(scheme)"))
                do {
                    let old = try Defaults(url: "\(scheme):\(backup)?cache=off").provider
                    try old.apply([.set("k", .int(5)), .set("y", .int(2))])
                }
                let provider = try Defaults(url: "\(scheme):\(store)?cache=off").provider
                try provider.apply([.set("k", .int(1)), .set("x", .int(1))])
                let log = EventLog(provider)
                // SQLite's store is its file; LMDB's is a directory with data.mdb in it.
                let (from, to) = scheme == "lmdb" ? (backup + "/data.mdb", store + "/data.mdb") : (backup, store)
                guard rename(from, to) == 0 else { throw DefaultsError(.ioFailure, "rename failed", backend: "test") }
                _ = waitUntil { log.all.count >= 3 }
                usleep(200_000)
                return log.all.map { "\($0.key)=\($0.newValue.map { "\($0)" } ?? "nil") \($0.origin)" }
            }
        }
        #expect(events == ["k=5 external", "x=nil external", "y=2 external"])
    }

}
