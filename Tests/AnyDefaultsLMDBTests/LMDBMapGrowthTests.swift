@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite struct LMDBMapGrowthTests {
    @Test func mapGrowsWhenFull() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"), options: .init(initialMapSize: 64 << 10))
            let initial = store.mapSize
            #expect(initial <= 64 << 10)
            let big = Data(repeating: 7, count: 3 << 20)
            try store.setValue(.data(big), forKey: "big")
            // One batch that outgrows the map part-way is rolled back and run again on a larger map.
            try store.apply((0..<300).map { .set("k\($0)", .string(String(repeating: "s", count: 500))) })
            try store.setValue(.int(1), forKey: "k0")
            #expect(store.mapSize > 3 << 20)
            #expect(try store.value(forKey: "big") == .data(big))
            #expect(try store.keys().count == 301)
        }
    }

    @Test func readersCarryOnWhileTheMapGrows() async throws {
        try await withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"), options: .init(initialMapSize: 64 << 10))
            try store.setValue(.string("steady"), forKey: "watched")
            let initial = store.mapSize
            try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask {
                    // Each write outgrows the map, which then grows while the readers read.
                    for index in 0..<12 {
                        try store.setValue(.data(Data(repeating: UInt8(index), count: 100_000 << (index / 3))), forKey: "big\(index)")
                    }
                    return 0
                }
                for _ in 0..<3 {
                    group.addTask {
                        var reads = 0
                        for _ in 0..<3_000 {
                            guard try store.value(forKey: "watched") == .string("steady") else { return -1 }
                            reads += 1
                        }
                        return reads
                    }
                }
                for try await reads in group { #expect(reads >= 0, "a reader saw a wrong value") }
            }
            #expect(store.mapSize >= initial * 16)
            #expect(try store.value(forKey: "big11") == .data(Data(repeating: 11, count: 100_000 << 3)))
        }
    }

    /// The watcher's check for new commits and the map size read LMDB's meta pages, which live in
    /// the map: while another thread maps the file again (growing or adopting the map size), they
    /// must wait in the gate. Before they did, this died with SIGSEGV within a second.
    /// Run in a process of its own, so that a crash fails this test only.
    @Test func readingTheMetaPagesWhileTheMapIsRemappedNeverCrashes() async {
        await #expect(processExitsWith: .success) {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try LMDBProvider(path: directory.path("store"), options: .init(initialMapSize: 64 << 10))
            // Observed: the watcher wakes on every commit below and reads the last transaction.
            let observation = store.observe { _ in }
            defer { observation.cancel() }
            // Before the fix, this died within the first second.
            let deadline = ContinuousClock.now + .seconds(2)
            let done = Atomic<Bool>(false)
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                while ContinuousClock.now < deadline { try? store.remap() }
                done.store(true, ordering: .releasing)
            }
            DispatchQueue.global().async(group: group) {
                while !done.load(ordering: .acquiring) {
                    _ = store.lastTransaction
                    _ = store.mapSize
                }
            }
            DispatchQueue.global().async(group: group) {
                var index: Int64 = 0
                while !done.load(ordering: .acquiring) {
                    index += 1
                    try? store.commitAsAnotherProcess { transaction throws(DefaultsError) in
                        _ = try transaction.apply(LMDBPreparedChange(.set("k", .int(index))), scheme: .standard)
                    }
                }
            }
            group.wait()
            #expect(store.lastTransaction != nil)
        }
    }

    @Test func fullAtMaximumIsStorageFullAndLosesNothing() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let options = LMDBProvider.Options(initialMapSize: 64 << 10, maximumMapSize: 512 << 10)
            let store = try LMDBProvider(path: path, options: options)
            let secret = "secret-" + String(repeating: "s", count: 40_000)
            var stored = 0
            var failure: DefaultsError?
            while failure == nil, stored < 100 {
                do throws(DefaultsError) {
                    try store.apply([.set("k\(stored)", .string(secret)), .set("n\(stored)", .int(Int64(stored)))])
                    stored += 1
                } catch {
                    failure = error
                }
            }
            let error = try #require(failure)
            #expect(error.code == .storageFull)
            #expect(error.path != nil)
            #expect(!error.description.contains("secret"))
            #expect(stored > 2)
            // The failed batch left no trace; everything before it is intact, also after reopening.
            #expect(try store.value(forKey: "k\(stored)") == nil)
            #expect(try store.value(forKey: "n\(stored)") == nil)
            store.close()
            let reopened = try LMDBProvider(path: path, options: options)
            #expect(try reopened.keys().count == 2 * stored)
            #expect(try reopened.value(forKey: "k0") == .string(secret))
            // Removing makes room again (LMDB reuses the pages a commit frees from the next
            // commit but one, as the previous commit's meta page still refers to them).
            try reopened.apply((0..<stored).map { .remove("k\($0)") })
            try reopened.setValue(.bool(true), forKey: "tick")
            try reopened.setValue(.string(secret), forKey: "again")
            #expect(try reopened.value(forKey: "again") == .string(secret))
        }
    }

    @Test func adoptsAMapGrownByAnotherProcess() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let store = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10))
            try store.setValue(.int(1), forKey: "before")
            let before = store.mapSize
            // The child grows the map far beyond this process's map while this one has it open.
            let child = try ChildProcess.run("TestChild", ["write-bytes", "lmdb:" + path + "?mapsize=64KiB", "big", String(4 << 20)])
            #expect(child.status == 0, "\(child.standardOutput) \(child.standardError)")
            let read = try #require(try store.value(forKey: "big"))
            #expect(read == .data(Data(repeating: 0xA5, count: 4 << 20)))
            #expect(store.mapSize > before)
            try store.setValue(.int(2), forKey: "after")
            #expect(Set(try store.keys()) == ["before", "big", "after"])
        }
    }
}
