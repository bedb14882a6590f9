@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// One LMDB store reached by two paths in one process shares one environment: LMDB forbids
/// opening it twice (its reader slots clash, MDB_BAD_RSLOT, and closing one copy drops the other's
/// locks). Shown by events: a write through one path reaches the other's observers at once, which
/// only the shared environment does (a second environment would skip this process's own log).
@Suite struct LMDBEnvironmentIdentityTests {
    /// Opens `first` and `second`, writes through each, and checks that both see one store.
    private func expectOneEnvironment(_ first: String, _ second: String) throws {
        let one = try LMDBProvider(path: first)
        let other = try LMDBProvider(path: second)
        let events = EventLog(other)
        try one.setValue(.int(1), forKey: "through.one")
        #expect(events.wait(for: 1).map(\.key) == ["through.one"])
        // Reads and writes in turn through both, then through one after the other is closed.
        for index in 0..<50 {
            _ = try one.value(forKey: "through.one")
            try other.setValue(.int(Int64(index)), forKey: "through.other")
            #expect(try one.value(forKey: "through.other") == .int(Int64(index)))
        }
        one.close()
        try other.setValue(.int(2), forKey: "after")
        #expect(try other.value(forKey: "through.one") == .int(1))
        other.close()
        #expect(try LMDBProvider(path: first).value(forKey: "after") == .int(2))
    }

    /// A store removed while an observed provider has it open, then made again at the same path
    /// by a new provider in the same process: both are on one environment (the removed store's,
    /// opened again; a second one on the same files would clash with it), and the old provider's
    /// observers hear the new store's writes.
    @Test func aStoreRemovedAndMadeAgainInTheSameProcessIsOneEnvironment() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let old = try LMDBProvider(path: path)
            let events = EventLog(old)
            try old.setValue(.int(1), forKey: "k")
            #expect(events.wait(for: 1).count == 1)
            try FileManager.default.removeItem(atPath: path)
            // The watch notices, fails to open the store again (there is none) and reports the removal.
            #expect(events.wait(for: 2).last?.newValue == .some(nil))
            let new = try LMDBProvider(path: path)
            try new.setValue(.int(2), forKey: "k")
            #expect(events.wait(for: 3).last?.newValue == .int(2), "\(events.all)")
            #expect(try old.value(forKey: "k") == .int(2))
            #expect(try new.value(forKey: "k") == .int(2))
            new.close()
            old.close()
            #expect(try LMDBProvider(path: path).value(forKey: "k") == .int(2))
        }
    }

    @Test func aDirectoryWhoseFilesAreHardLinksToTheStoresIsTheSameStore() throws {
        try withTemporaryDirectory { directory in
            let first = directory.path("first")
            try LMDBProvider(path: first).setValue(.bool(true), forKey: "created")
            let second = directory.path("second")
            try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: false)
            #expect(link(first + "/data.mdb", second + "/data.mdb") == 0)
            #expect(link(first + "/lock.mdb", second + "/lock.mdb") == 0)
            try expectOneEnvironment(first, second)
        }
    }

    @Test func aSymbolicLinkToTheStoresDirectoryIsTheSameStore() throws {
        try withTemporaryDirectory { directory in
            let first = directory.path("first")
            try LMDBProvider(path: first).setValue(.bool(true), forKey: "created")
            #expect(symlink(first, directory.path("link")) == 0)
            try expectOneEnvironment(first, directory.path("link"))
        }
    }

    /// As root only (mounting needs it); a root that cannot bind-mount fails the test.
    @Test(.enabled(if: geteuid() == 0)) func aBindMountOfTheStoresDirectoryIsTheSameStore() throws {
        try withTemporaryDirectory { directory in
            let first = directory.path("first")
            try LMDBProvider(path: first).setValue(.bool(true), forKey: "created")
            let mountPoint = directory.path("mounted")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
            let mounted = try ChildProcess.runSystem("/bin/mount", ["--bind", first, mountPoint])
            #expect(mounted.status == 0, "mount --bind failed: \(mounted.standardError)")
            guard mounted.status == 0 else { return }
            defer { _ = try? ChildProcess.runSystem("/bin/umount", [mountPoint]) }
            try expectOneEnvironment(first, mountPoint)
        }
    }
}
