@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import AnyDefaultsPlatform
import Foundation
import Testing
import TestSupport

/// `durability=mapped`: commits write the map in place (`MDB_WRITEMAP`), whose disk space is
/// reserved as the map grows, and the store stays one store for providers of other durabilities.
/// (Crash safety: CrashTests; syncs and writes per commit: DurabilityTests; the contract:
/// BackendConformanceTests.)
@Suite struct LMDBMappedDurabilityTests {
    /// The bytes of `path` and the bytes the file system allocated for it.
    private func sizes(_ path: String) throws -> (size: Int, allocated: Int) {
        var info = stat()
        try #require(stat(path, &info) == 0, "stat \(path)")
        return (Int(info.st_size), Int(info.st_blocks) * 512)
    }

    @Test func theMapHasItsDiskSpaceAsItGrows() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let store = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10, durability: .mapped))
            try store.setValue(.int(1), forKey: "k")
            var (size, allocated) = try sizes(path + "/data.mdb")
            #expect(size >= 64 << 10)
            #expect(allocated >= size, "a sparse map: \(allocated) of \(size) bytes allocated")
            // Enough to grow the map several times.
            let blob = DefaultsValue.data(Data(repeating: 7, count: 16 << 10))
            for index in 0..<64 { try store.setValue(blob, forKey: "blob\(index)") }
            (size, allocated) = try sizes(path + "/data.mdb")
            #expect(size >= 1 << 20, "the map grew: \(size)")
            #expect(allocated >= size, "the grown map is sparse: \(allocated) of \(size) bytes allocated")
            store.close()
            let reopened = try LMDBProvider(path: path)
            #expect(try reopened.value(forKey: "blob63") == blob)
            #expect(try reopened.value(forKey: "k") == .int(1))
        }
    }

    @Test func aStoreOpenedWithoutTheMappedWritesIsWrittenAsNoSync() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let synced = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10))
            let mapped = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10, durability: .mapped))
            try synced.setValue(.string("synced"), forKey: "a")
            try mapped.setValue(.string("mapped"), forKey: "b")
            try synced.setValue(.int(3), forKey: "c")
            #expect(try mapped.value(forKey: "a") == .string("synced"))
            #expect(try synced.value(forKey: "b") == .string("mapped"))
            // The environment was opened without MDB_WRITEMAP: its file stays as LMDB wrote it.
            let (size, _) = try sizes(path + "/data.mdb")
            #expect(size < 64 << 10, "opened first without the map written in place: \(size) bytes")
            synced.close()
            mapped.close()
            let reopened = try LMDBProvider(path: path, options: .init(durability: .mapped))
            #expect(try reopened.allValues() == ["a": .string("synced"), "b": .string("mapped"), "c": .int(3)])
        }
    }

    @Test func aMappedProviderAndASyncedOneInAnotherProcessShareTheStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let mapped = try LMDBProvider(path: path, options: .init(durability: .mapped))
            try mapped.setValue(.int(1), forKey: "mine")
            let result = try ChildProcess.run("TestChild", ["apply", "lmdb:" + path, "theirs=2"])
            try #require(result.status == 0, "\(result.standardError)")
            #expect(try mapped.value(forKey: "theirs") == .int(2))
            try mapped.setValue(.int(3), forKey: "mine")
            let read = try ChildProcess.run("TestChild", ["get", "lmdb:" + path, "mine"])
            #expect(read.standardOutput.contains("3"), "\(read.standardOutput) \(read.standardError)")
        }
    }
}
