@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite struct LMDBProviderTests {
    @Test func edgeValuesRoundTripAndPersist() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            do {
                let store = try LMDBProvider(path: path)
                for (name, value) in EdgeValues.all { try store.setValue(value, forKey: name) }
                for (name, value) in EdgeValues.all {
                    let read = try #require(try store.value(forKey: name), "\(name)")
                    #expect(EdgeValues.identical(read, value), "\(name)")
                }
            }
            let reopened = try LMDBProvider(path: path)
            for (name, value) in EdgeValues.all {
                let read = try #require(try reopened.value(forKey: name), "\(name)")
                #expect(EdgeValues.identical(read, value), "\(name) after reopening")
            }
            #expect(Set(try reopened.keys()) == Set(EdgeValues.all.map(\.name)))
        }
    }

    @Test func secondInstanceSeesWritesAtOnce() throws {
        try withTemporaryDirectory { directory in
            let first = try LMDBProvider(path: directory.path("store"))
            // Another spelling of the same directory.
            let second = try LMDBProvider(path: directory.path("store") + "/./")
            try first.setValue(.int(1), forKey: "a")
            #expect(try second.value(forKey: "a") == .int(1))
            try second.apply([.set("b", .string("x")), .remove("a")])
            #expect(try first.value(forKey: "a") == nil)
            #expect(try first.value(forKey: "b") == .string("x"))
        }
    }

    @Test func canonicallyEquivalentKeysAreOneKey() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try store.setValue(.int(1), forKey: "caf\u{E9}")
            try store.setValue(.int(2), forKey: "cafe\u{301}")
            #expect(try store.keys() == ["caf\u{E9}"])
            #expect(try store.value(forKey: "caf\u{E9}") == .int(2))
            #expect(throws: DefaultsError.self) { try store.setValue(.int(1), forKey: "") }
        }
    }

    @Test func keysRemovalAndRemoveAll() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            #expect(try store.keys().isEmpty)
            try store.apply((0..<50).map { .set("k\($0)", .int(Int64($0))) })
            try store.removeValue(forKey: "k3")
            try store.removeValue(forKey: "absent")
            #expect(Set(try store.keys()) == Set((0..<50).filter { $0 != 3 }.map { "k\($0)" }))
            #expect(try store.allValues()["k7"] == .int(7))
            try store.removeAll()
            #expect(try store.keys().isEmpty)
            try store.setValue(.bool(true), forKey: "after")
            #expect(try LMDBProvider(path: directory.path("store")).keys() == ["after"])
        }
    }

    @Test func rejectedBatchLeavesNoTrace() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try store.setValue(.int(1), forKey: "a")
            var tooDeep = DefaultsValue.int(0)
            for _ in 0...DefaultsValue.maximumNestingDepth { tooDeep = .array([tooDeep]) }
            #expect(throws: DefaultsError.self) { try store.apply([.set("a", .int(2)), .set("b", tooDeep)]) }
            #expect(throws: DefaultsError.self) { try store.apply([.remove("a"), .set("", .int(3))]) }
            #expect(try store.value(forKey: "a") == .int(1))
            #expect(try store.keys() == ["a"])
        }
    }

    @Test func eventsOnlyForRealChanges() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            let log = Recorder<DefaultsChangeEvent>()
            let observation = store.observe(log.record)
            try store.setValue(.int(1), forKey: "a")
            try store.setValue(.int(1), forKey: "a")  // same value: no event
            try store.setValue(.double(.nan), forKey: "n")
            try store.setValue(.double(Double(nan: 99, signaling: false)), forKey: "n")  // NaN is NaN
            try store.setValue(.dictionary(["x": .int(1), "y": .int(2)]), forKey: "d")
            try store.setValue(.dictionary(["y": .int(2), "x": .int(1)]), forKey: "d")
            try store.removeValue(forKey: "absent")  // absent: no event
            try store.apply([.set("a", .int(2)), .remove("a"), .set("long" + String(repeating: "x", count: 600), .int(1))])
            try store.setValue(.int(1), forKey: "long" + String(repeating: "x", count: 600))
            try store.removeAll()
            observation.cancel()
            try store.setValue(.int(5), forKey: "unobserved")
            let long = "long" + String(repeating: "x", count: 600)
            let events = log.all
            #expect(events.count == 9)
            #expect(Array(events.prefix(6)) == [
                DefaultsChangeEvent(key: "a", newValue: .int(1)),
                DefaultsChangeEvent(key: "n", newValue: .double(.nan)),
                DefaultsChangeEvent(key: "d", newValue: .dictionary(["x": .int(1), "y": .int(2)])),
                DefaultsChangeEvent(key: "a", newValue: .int(2)),
                DefaultsChangeEvent(key: "a", newValue: nil),
                DefaultsChangeEvent(key: long, newValue: .int(1)),
            ])
            // removeAll reports each removed key once, in no particular order.
            #expect(Set(events.dropFirst(6)) == [
                DefaultsChangeEvent(key: long, newValue: nil),
                DefaultsChangeEvent(key: "d", newValue: nil),
                DefaultsChangeEvent(key: "n", newValue: nil),
            ])
        }
    }

    @Test func otherInstancesSeeChangesAsExternal() throws {
        try withTemporaryDirectory { directory in
            let first = try LMDBProvider(path: directory.path("store"))
            let second = try LMDBProvider(path: directory.path("store"))
            let firstLog = Recorder<DefaultsChangeEvent>(), secondLog = Recorder<DefaultsChangeEvent>()
            let observations = [first.observe(firstLog.record), second.observe(secondLog.record)]
            try first.setValue(.int(1), forKey: "a")
            try second.setValue(.int(1), forKey: "a")  // unchanged
            try second.setValue(.int(2), forKey: "b")
            #expect(firstLog.all == [
                DefaultsChangeEvent(key: "a", newValue: .int(1), origin: .local),
                DefaultsChangeEvent(key: "b", newValue: .int(2), origin: .external),
            ])
            #expect(secondLog.all == [
                DefaultsChangeEvent(key: "a", newValue: .int(1), origin: .external),
                DefaultsChangeEvent(key: "b", newValue: .int(2), origin: .local),
            ])
            _ = observations
        }
    }

    @Test func handlersMayUseTheStore() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            let observation = store.observe { event in
                if event.key == "trigger" { try? store.setValue(.bool(true), forKey: "reacted") }
            }
            try store.setValue(.int(1), forKey: "trigger")
            #expect(try store.value(forKey: "reacted") == .bool(true))
            observation.cancel()
        }
    }

    @Test func closedProviderThrowsClosedAndOthersCarryOn() throws {
        try withTemporaryDirectory { directory in
            let first = try LMDBProvider(path: directory.path("store"))
            let second = try LMDBProvider(path: directory.path("store"))
            try first.setValue(.int(1), forKey: "a")
            first.close()
            first.close()
            #expect { try first.value(forKey: "a") } throws: { ($0 as? DefaultsError)?.code == .closed }
            #expect { try first.setValue(.int(2), forKey: "a") } throws: { ($0 as? DefaultsError)?.code == .closed }
            #expect(try second.value(forKey: "a") == .int(1))
            second.close()
            // Everything closed: the store opens afresh.
            #expect(try LMDBProvider(path: directory.path("store")).value(forKey: "a") == .int(1))
        }
    }

    @Test func noSyncDurabilityStoresTheSame() throws {
        try withTemporaryDirectory { directory in
            let fast = try LMDBProvider(path: directory.path("store"), options: .init(durability: .noSync))
            let synced = try LMDBProvider(path: directory.path("store"))
            try fast.setValue(.int(1), forKey: "fast")
            try synced.setValue(.int(2), forKey: "synced")
            try fast.setValue(.int(3), forKey: "fast")
            #expect(try synced.value(forKey: "fast") == .int(3))
            #expect(try fast.value(forKey: "synced") == .int(2))
        }
    }

    @Test func manyThreadsReadAndWriteWithoutLostUpdates() async throws {
        try await withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"), options: .init(initialMapSize: 64 << 10))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        for index in 0..<40 {
                            try store.setValue(.string(String(repeating: "v", count: 200)), forKey: "w\(writer)-\(index)")
                            _ = try store.value(forKey: "w\((writer + 1) % 8)-\(index)")
                        }
                    }
                }
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<50 { _ = try store.keys() }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try store.keys().count == 8 * 40)
        }
    }

    @Test func filesAreOwnerOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            _ = try LMDBProvider(path: path)
            func mode(_ path: String) throws -> Int {
                try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            }
            #expect(try mode(path) == 0o700)
            #expect(try mode(path + "/data.mdb") == 0o600)
            #expect(try mode(path + "/lock.mdb") == 0o600)
        }
    }
}
