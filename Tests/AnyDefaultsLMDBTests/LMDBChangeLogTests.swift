@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

/// The change log that tells other processes which keys changed (store format 2). Another process
/// is played by `commitAsAnotherProcess`, which commits what that process's write would: values,
/// log entries of another origin, a lease.
@Suite struct LMDBChangeLogTests {
    static let otherOrigin: Int64 = 42

    /// Gives `otherOrigin` a lease ending `seconds` from now.
    static func leaseToAnotherProcess(_ store: LMDBProvider, seconds: Int64 = 100) throws {
        try store.commitAsAnotherProcess { transaction throws(DefaultsError) in
            try transaction.putLease(origin: otherOrigin, until: ChangeLog.now + seconds, now: ChangeLog.now)
        }
    }

    static func put(_ key: String, _ value: DefaultsValue, in transaction: LMDBTransaction) throws(DefaultsError) {
        _ = try transaction.apply(LMDBPreparedChange(.set(key, value)), scheme: .standard)
    }

    @Test func aFormatOneStoreIsBroughtToFormatTwoWithItsValues() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try RawLMDB.put(
                [(LMDBKeyScheme.formatMarkerKey, [1]), (Array("kept".utf8), LMDBValueCodec.encode(.string("old")))], path: path)
            let store = try LMDBProvider(path: path)
            #expect(try store.formatVersion() == 2)
            #expect(try store.allValues() == ["kept": .string("old")])
        }
    }

    @Test func nothingIsLoggedUnlessAnotherProcessHoldsALease() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try store.setValue(.int(1), forKey: "unwatched")
            // This process's own lease does not count: it hears of its own writes anyway.
            let observation = store.observe { _ in }
            defer { observation.cancel() }
            try store.setValue(.int(2), forKey: "unwatched")
            try Self.leaseToAnotherProcess(store, seconds: -5)  // ended
            try store.setValue(.int(3), forKey: "unwatched")
            #expect(try store.changeLogEntries() == [])
            #expect(Set(try store.leaseHolders()) == [Self.otherOrigin, ChangeLog.processOrigin])

            try Self.leaseToAnotherProcess(store)
            try store.setValue(.int(4), forKey: "watched")
            #expect(try store.changeLogEntries() == [ChangeLog.Entry(sequence: 1, key: "watched", origin: ChangeLog.processOrigin)])
        }
    }

    @Test func everyRealChangeIsLoggedInCommitOrderAndRemoveAllKeepsTheMetadata() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try Self.leaseToAnotherProcess(store)
            let long = String(repeating: "l", count: 600)
            try store.setValue(.int(1), forKey: "a")
            try store.setValue(.int(1), forKey: "a")  // the same value: nothing
            try store.setValue(.double(-0.0), forKey: "a")
            try store.removeValue(forKey: "absent")  // nothing
            try store.apply([.set("b", .int(2)), .remove("a"), .set(long, .int(3))])
            try store.removeAll()
            #expect(try store.changeLogEntries().map(\.key) == ["a", "a", "b", "a", long, "b", long])
            #expect(try store.changeLogEntries().map(\.sequence) == Array(1...7))
            #expect(try store.keys() == [])
            #expect(try store.formatVersion() == 2)
            #expect(try store.leaseHolders() == [Self.otherOrigin])
        }
    }

    @Test func oldEntriesArePrunedButNeverThoseOfTheLastMinute() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try Self.leaseToAnotherProcess(store)
            // A batch far larger than the entries kept: all of it stays while it is young.
            try store.apply((0..<1500).map { .set("k\($0)", .int(1)) })
            #expect(try store.changeLogEntries().count == 1500)
            // Once old, entries more than 1024 behind go at the next multiple of 256: the first
            // 512 are made an hour old.
            let entries = try store.changeLogEntries()
            try store.commitAsAnotherProcess { transaction throws(DefaultsError) in
                for entry in entries.prefix(512) {
                    let data = LMDBChangeLog.bigEndian(entry.origin) + LMDBChangeLog.bigEndian(ChangeLog.now - 3600)
                        + Array(entry.key.utf8)
                    try LMDBChangeLog.logKey(entry.sequence).withBytes { key throws(DefaultsError) in
                        try data.withBytes { data throws(DefaultsError) in try transaction.put(key, data, for: nil) }
                    }
                }
            }
            try store.apply((0..<36).map { .set("k\($0)", .int(2)) })
            let pruned = try store.changeLogEntries()
            #expect(pruned.first?.sequence == 513)
            #expect(pruned.last?.sequence == 1536)
        }
    }

    @Test func anotherProcessesLoggedCommitArrivesAsExternalEventsBeforeTheNextLocalOne() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            let events = EventLog(store)
            try store.commitAsAnotherProcess { transaction throws(DefaultsError) in
                try Self.put("x", .int(5), in: transaction)
                try Self.put("y", .int(6), in: transaction)
                try transaction.appendToLog(["y", "x"], origin: Self.otherOrigin, now: ChangeLog.now)
            }
            // Written at once, perhaps before the watch read the log: the write reports what came
            // before it first.
            try store.setValue(.int(1), forKey: "local")
            #expect(events.settled(at: 3) == [
                DefaultsChangeEvent(key: "y", newValue: .int(6), origin: .external),
                DefaultsChangeEvent(key: "x", newValue: .int(5), origin: .external),
                DefaultsChangeEvent(key: "local", newValue: .int(1), origin: .local),
            ])
        }
    }

    @Test func aReaderThatMissedEntriesReportsEveryKey() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try store.apply([.set("old", .int(1)), .set("gone", .int(1))])
            let events = EventLog(store)
            // Entries far past the position: those in between were pruned before this process read them.
            try store.commitAsAnotherProcess { transaction throws(DefaultsError) in
                try Self.put("new", .int(2), in: transaction)
                _ = try transaction.apply(LMDBPreparedChange(.remove("gone")), scheme: .standard)
                for (sequence, key) in [(Int64(5000), "new"), (5001, "gone")] {
                    let data = LMDBChangeLog.bigEndian(Self.otherOrigin) + LMDBChangeLog.bigEndian(ChangeLog.now) + Array(key.utf8)
                    try LMDBChangeLog.logKey(sequence).withBytes { logKey throws(DefaultsError) in
                        try data.withBytes { data throws(DefaultsError) in try transaction.put(logKey, data, for: nil) }
                    }
                }
            }
            #expect(Set(events.settled(at: 3)) == [
                DefaultsChangeEvent(key: "old", newValue: .int(1), origin: .external),
                DefaultsChangeEvent(key: "new", newValue: .int(2), origin: .external),
                DefaultsChangeEvent(key: "gone", newValue: nil, origin: .external),
            ])
        }
    }

    /// A damaged log entry whose sequence number is at the end of the range (or, sorting last,
    /// negative): writes neither trap nor fail; the log starts again, and a reader that saw the
    /// damaged end reports every key rather than miss one.
    @Test(arguments: [Int64.max, Int64.max / 2 + 1, -1, Int64.min])
    func aLogAtTheEndOfItsNumbersStartsAgain(_ damaged: Int64) throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBProvider(path: directory.path("store"))
            try Self.leaseToAnotherProcess(store)
            try store.setValue(.int(1), forKey: "before")
            try store.commitAsAnotherProcess { transaction throws(DefaultsError) in
                let data = LMDBChangeLog.bigEndian(Self.otherOrigin) + LMDBChangeLog.bigEndian(ChangeLog.now) + Array("before".utf8)
                try LMDBChangeLog.logKey(damaged).withBytes { logKey throws(DefaultsError) in
                    try data.withBytes { data throws(DefaultsError) in try transaction.put(logKey, data, for: nil) }
                }
            }
            let events = EventLog(store)
            try store.setValue(.int(2), forKey: "after")
            try store.apply([.set("again", .int(3)), .remove("before")])
            #expect(try store.changeLogEntries().map(\.sequence) == [1, 2, 3])
            #expect(try store.changeLogEntries().map(\.key) == ["after", "again", "before"])
            #expect(Set(events.settled(at: 3).map(\.key)).isSuperset(of: ["after", "again", "before"]))
            #expect(try store.allValues() == ["after": .int(2), "again": .int(3)])
        }
    }

    @Test func theLeaseIsGivenBackWhenTheLastProviderCloses() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let first = try LMDBProvider(path: path)
            let observation = first.observe { _ in }
            #expect(try first.leaseHolders() == [ChangeLog.processOrigin])
            first.close()
            observation.cancel()
            // The environment closed with its last provider: a new one sees no lease.
            #expect(try LMDBProvider(path: path).leaseHolders() == [])
        }
    }
}
