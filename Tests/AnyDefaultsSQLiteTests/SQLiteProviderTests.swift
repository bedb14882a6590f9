import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

@testable import AnyDefaultsSQLite

/// Every edge value of the contract, keyed by what it tests.
let edgeValues: [String: DefaultsValue] = {
    let scalars: [String: DefaultsValue] = [
        "int.min": .int(.min), "int.max": .int(.max), "int.zero": .int(0), "int.one": .int(1),
        "double.one": .double(1), "bool.true": .bool(true), "bool.false": .bool(false),
        "double.negativeZero": .double(-0.0), "double.zero": .double(0),
        "double.infinity": .double(.infinity), "double.negativeInfinity": .double(-.infinity),
        "double.nan": .double(.nan), "double.tiny": .double(.leastNonzeroMagnitude),
        "double.huge": .double(.greatestFiniteMagnitude), "double.third": .double(1.0 / 3),
        "string.empty": .string(""), "string.unicode": .string("Grüße, 世界 👩‍👩‍👧 e\u{301} \u{0} end"),
        "data.empty": .data(Data()), "data.bytes": .data(Data(0...255)),
        "date.now": .date(Date(timeIntervalSinceReferenceDate: 784_111_777.123_456_789)),
        "date.negativeZero": .date(Date(timeIntervalSinceReferenceDate: -0.0)),
        "date.distantPast": .date(.distantPast), "date.nan": .date(Date(timeIntervalSinceReferenceDate: .nan)),
        "array.empty": .array([]), "dictionary.empty": .dictionary([:]),
    ]
    var values = scalars
    values["array.everything"] = .array(Array(scalars.values) + [.array([.array([])])])
    values["dictionary.everything"] = .dictionary(scalars.merging(["nested": .dictionary(scalars)]) { $1 })
    values["data.large"] = .data(Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
    return values
}()

@Suite struct SQLiteProviderTests {
    @Test func everyEdgeValueRoundTripsExactlyAndAfterReopening() throws {
        try withStore { store, directory in
            let path = store.path
            try store.apply(edgeValues.map { .set($0.key, $0.value) })
            for (key, value) in edgeValues {
                #expect(try store.value(forKey: key) == value, "\(key)")
            }
            store.close()

            let reopened = try SQLiteProvider(path: path)
            #expect(try reopened.allValues() == edgeValues)
            #expect(try Set(reopened.keys()) == Set(edgeValues.keys))
            // Equality compares bits, but say it outright for the sign of zero.
            guard case .double(let zero) = try reopened.value(forKey: "double.negativeZero") else {
                Issue.record("no double")
                return
            }
            #expect(zero.bitPattern == (-0.0 as Double).bitPattern)
            #expect(try reopened.value(forKey: "int.one") != reopened.value(forKey: "double.one"))
            #expect(try reopened.value(forKey: "int.one") != reopened.value(forKey: "bool.true"))
        }
    }

    @Test func keysAreCanonicalAndLongKeysWork() throws {
        try withStore { store, directory in
            try store.setValue(.int(1), forKey: "caf\u{E9}")
            #expect(try store.value(forKey: "cafe\u{301}") == .int(1))
            try store.setValue(.int(2), forKey: "cafe\u{301}")
            #expect(try store.keys() == ["caf\u{E9}"])

            let long = String(repeating: "ключ", count: 300)  // 2400 bytes of UTF-8
            try store.setValue(.string("v"), forKey: long)
            #expect(try store.value(forKey: long) == .string("v"))

            #expect(throws: DefaultsError.self) { try store.setValue(.int(1), forKey: "") }
            var deep = DefaultsValue.array([])
            for _ in 0..<DefaultsValue.maximumNestingDepth { deep = .array([deep]) }
            let error = #expect(throws: DefaultsError.self) { try store.setValue(deep, forKey: "deep") }
            #expect(error?.code == .invalidValue)
            #expect(error?.key == "deep")
            #expect(try store.value(forKey: "deep") == nil)
        }
    }

    @Test func removalAndRemoveAll() throws {
        try withStore { store, directory in
            try store.removeValue(forKey: "absent")
            try store.apply([.set("a", .int(1)), .set("b", .int(2)), .set("c", .int(3))])
            try store.removeValue(forKey: "b")
            #expect(try Set(store.keys()) == ["a", "c"])
            try store.removeAll()
            #expect(try store.keys() == [])
            #expect(try store.value(forKey: "a") == nil)
        }
    }

    @Test func aSecondInstanceSeesWritesAtOnce() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let first = try SQLiteProvider(path: path)
            let second = try SQLiteProvider(path: path)
            try first.setValue(.string("one"), forKey: "k")
            #expect(try second.value(forKey: "k") == .string("one"))
            try second.setValue(.string("two"), forKey: "k")
            #expect(try first.value(forKey: "k") == .string("two"))
            try second.removeValue(forKey: "k")
            #expect(try first.value(forKey: "k") == nil)
            try first.apply([.set("x", .int(1)), .set("y", .int(2))])
            #expect(try second.allValues() == ["x": .int(1), "y": .int(2)])
        }
    }

    @Test func otherInstancesOnTheFileReportCommitsAsExternal() throws {
        try withStore { store, directory in
            // The same file under another name is still the same file.
            let link = directory.path("link.sqlite")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: store.path)
            let sibling = try SQLiteProvider(path: link)
            let elsewhere = try SQLiteProvider(path: directory.path("other.sqlite"))
            let here = EventLog(store)
            let there = EventLog(sibling)
            let unrelated = EventLog(elsewhere)

            try store.setValue(.int(1), forKey: "a")
            try store.setValue(.int(1), forKey: "a")  // no change: no event anywhere
            try sibling.apply([.set("b", .int(2)), .remove("a")])
            try elsewhere.setValue(.int(9), forKey: "a")
            let changes = [
                DefaultsChangeEvent(key: "a", newValue: .int(1)), DefaultsChangeEvent(key: "b", newValue: .int(2)),
                DefaultsChangeEvent(key: "a", newValue: nil),
            ]
            #expect(here.all.map(\.key) == changes.map(\.key))
            #expect(here.all.map(\.newValue) == changes.map(\.newValue))
            #expect(here.all.map(\.origin) == [.local, .external, .external])
            #expect(there.all.map(\.origin) == [.external, .local, .local])
            #expect(unrelated.all.map(\.origin) == [.local])

            // So a cache in front of one instance forgets what the other changed.
            let cached = store.cached()
            #expect(try cached.value(forKey: "b") == .int(2))
            try sibling.setValue(.int(3), forKey: "b")
            #expect(try cached.value(forKey: "b") == .int(3))
        }
    }

    @Test func eventsOnlyForRealChangesInCommitOrder() throws {
        try withStore { store, directory in
            try store.setValue(.double(0), forKey: "zero")
            try store.setValue(.string("café"), forKey: "text")
            let log = EventLog(store)

            try store.setValue(.double(0), forKey: "zero")  // same value
            try store.setValue(.string("café"), forKey: "text")  // the same spelling
            try store.removeValue(forKey: "absent")
            #expect(log.all.isEmpty)

            // Another spelling is a change: the store keeps the spelling written.
            try store.setValue(.string("cafe\u{301}"), forKey: "text")
            try store.setValue(.double(-0.0), forKey: "zero")  // a different bit pattern
            try store.setValue(.int(0), forKey: "zero")  // a different type
            try store.apply([.set("a", .int(1)), .set("b", .int(2)), .set("a", .int(1)), .remove("nothing"), .remove("b")])
            try store.setValue(.double(.nan), forKey: "nan")
            try store.setValue(.double(-.nan), forKey: "nan")  // every NaN is the same value
            try store.removeAll()
            #expect(log.keys == ["text", "zero", "zero", "a", "b", "b", "nan"] + log.keys.suffix(4))
            #expect(Set(log.keys.suffix(4)) == ["zero", "text", "a", "nan"])
            #expect(log.all.prefix(6).map(\.newValue) == [.string("cafe\u{301}"), .double(-0.0), .int(0), .int(1), .int(2), nil])
            #expect(log.all.allSatisfy { $0.origin == .local })
        }
    }

    @Test func aRejectedBatchLeavesNoTrace() throws {
        try withStore { store, directory in
            try store.setValue(.int(1), forKey: "kept")
            let log = EventLog(store)
            #expect(throws: DefaultsError.self) {
                try store.apply([.set("new", .int(2)), .remove("kept"), .set("", .int(3))])
            }
            #expect(try store.allValues() == ["kept": .int(1)])
            #expect(log.all.isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func aBatchThatFailsInSQLitePartWayIsRolledBack(observed: Bool) throws {
        try withStore { store, directory in
            try store.setValue(.int(1), forKey: "kept")
            let log = observed ? EventLog(store) : nil
            store.limitLength(to: 1000)
            let error = #expect(throws: DefaultsError.self) {
                try store.apply([.set("new", .int(2)), .remove("kept"), .set("big", .data(Data(count: 5000)))])
            }
            #expect(error?.code == .invalidValue)
            #expect(error?.key == "big")
            #expect(try store.allValues() == ["kept": .int(1)])
            #expect(log?.all.isEmpty ?? true)
            // The connection is usable afterwards: the transaction was rolled back, not left open.
            try store.apply([.set("new", .int(2)), .remove("kept")])
            #expect(try store.allValues() == ["new": .int(2)])
            #expect(log?.keys ?? ["new", "kept"] == ["new", "kept"])
        }
    }

    @Test func manyThreadsOnOneInstanceLoseNothing() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteProvider(path: directory.path("store.sqlite"))
            let other = try SQLiteProvider(path: directory.path("store.sqlite"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    let target = task.isMultiple(of: 2) ? store : other
                    group.addTask {
                        for index in 0..<50 {
                            try target.setValue(.int(Int64(index)), forKey: "t\(task).\(index)")
                            #expect(try target.value(forKey: "t\(task).\(index)") == .int(Int64(index)))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try store.keys().count == 400)
        }
    }

    @Test func durabilityAndJournalSettings() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let normal = try SQLiteProvider(path: path)
            #expect(normal.durability == .normal)
            #expect(try normal.pragma("synchronous") == "1")  // NORMAL
            #expect(try normal.pragma("journal_mode") == "wal")
            let full = try SQLiteProvider(path: path, durability: .full, busyTimeout: .seconds(Int64.max))
            #expect(try full.pragma("synchronous") == "2")  // FULL
            #expect(try full.pragma("user_version") == "\(SQLiteSchema.version)")
        }
    }

    @Test func statementsArePreparedOnceAndReused() throws {
        try withStore { store, directory in
            let prepared = store.preparedStatementCount
            for index in 0..<20 {
                try store.setValue(.int(Int64(index)), forKey: "k\(index % 3)")
                _ = try store.value(forKey: "k1")
                _ = try store.allValues()
                try store.apply([.set("a", .int(1)), .remove("a")])
            }
            #expect(store.preparedStatementCount == prepared)
        }
    }

    @Test func aClosedStoreFailsWithClosed() throws {
        try withStore { store, directory in
            try store.setValue(.int(1), forKey: "k")
            store.close()
            store.close()
            let error = #expect(throws: DefaultsError.self) { try store.value(forKey: "k") }
            #expect(error?.code == .closed)
            #expect(error?.path == store.path)
            #expect(throws: DefaultsError.self) { try store.setValue(.int(2), forKey: "k") }
            #expect(try SQLiteProvider(path: store.path).value(forKey: "k") == .int(1))
        }
    }

    @Test func aLockHeldTooLongIsBusyAndAShortOneIsWaitedFor() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let impatient = try SQLiteProvider(path: path, busyTimeout: .milliseconds(100))
            let patient = try SQLiteProvider(path: path, busyTimeout: .seconds(10))
            let holder = try RawDatabase(path)
            try holder.query("BEGIN IMMEDIATE")
            let started = ContinuousClock.now
            let error = #expect(throws: DefaultsError.self) { try impatient.setValue(.int(1), forKey: "k") }
            #expect(error?.code == .busy)
            #expect(error?.path == impatient.path)
            #expect(error?.message.contains("busyTimeout") == true && error?.message.contains("busytimeout=") == true)
            #expect(error?.isRetryable == true)
            #expect(ContinuousClock.now - started >= .milliseconds(100))
            // Readers never wait in WAL mode.
            #expect(try impatient.value(forKey: "k") == nil)

            // A thread of its own: the writer below blocks, and with every cooperative thread busy
            // (2 cores) a Task might not get to run before the writer gives up.
            let released = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                usleep(150_000)
                #expect(throws: Never.self) { try holder.query("COMMIT") }
                released.signal()
            }
            try patient.setValue(.int(2), forKey: "k")
            released.wait()
            #expect(try impatient.value(forKey: "k") == .int(2))
        }
    }
}
