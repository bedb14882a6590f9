import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@testable import AnyDefaultsSQLite

/// The change log that tells other processes which keys changed (schema version 2). A foreign
/// process is played here by a plain connection (`RawDatabase`), which writes what another
/// process's writes would: the value and a log row of another origin.
@Suite struct SQLiteChangeLogTests {
    /// A lease held by a process that is not this one, for `seconds` from now.
    static func foreignLease(_ raw: RawDatabase, seconds: Int = 100) throws {
        try raw.query("INSERT OR REPLACE INTO watchers VALUES (42, CAST(strftime('%s', 'now') AS INTEGER) + \(seconds))")
    }

    /// Runs each statement of `script` (statements end with a semicolon at the end of a line).
    static func run(_ raw: RawDatabase, _ script: String) throws {
        for statement in script.components(separatedBy: ";\n") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            try raw.query(statement)
        }
    }

    static func loggedKeys(_ raw: RawDatabase) throws -> [String] {
        try raw.query("SELECT key FROM changes ORDER BY seq").map { $0[0] }
    }

    @Test func aVersionOneStoreIsMigratedWithItsValues() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("old.sqlite")
            // Exactly what version 1 wrote.
            try Self.run(
                RawDatabase(path),
                """
                PRAGMA journal_mode = WAL;
                CREATE TABLE defaults (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value) WITHOUT ROWID;
                PRAGMA application_id = \(SQLiteSchema.applicationID);
                PRAGMA user_version = 1;
                INSERT INTO defaults VALUES ('kept', 'string', 'old'), ('count', 'int', 3);
                """)
            let store = try SQLiteProvider(path: path)
            #expect(try store.value(forKey: "kept") == .string("old"))
            #expect(try store.allValues() == ["kept": .string("old"), "count": .int(3)])
            let raw = try RawDatabase(path)
            #expect(try raw.scalar("PRAGMA user_version") == "2")
            #expect(try raw.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").map { $0[0] }
                == ["changes", "defaults", "watchers"])
            try store.setValue(.int(4), forKey: "count")
            store.close()
            #expect(try SQLiteProvider(path: path).value(forKey: "count") == .int(4))
        }
    }

    @Test func nothingIsLoggedUnlessAnotherProcessHoldsALease() throws {
        try withStore { store, _ in
            let raw = try RawDatabase(store.path)
            try store.setValue(.int(1), forKey: "unwatched")
            // This process's own lease does not count: it hears of its own writes anyway.
            let observation = store.observe { _ in }
            defer { observation.cancel() }
            try store.setValue(.int(2), forKey: "unwatched")
            try Self.foreignLease(raw, seconds: -5)  // lapsed
            try store.setValue(.int(3), forKey: "unwatched")
            #expect(try Self.loggedKeys(raw) == [])
            #expect(try raw.query("SELECT count(*) FROM watchers").first == ["2"])

            try Self.foreignLease(raw)
            try store.setValue(.int(4), forKey: "watched")
            #expect(try Self.loggedKeys(raw) == ["watched"])
            #expect(try raw.scalar("SELECT origin FROM changes") == "\(ChangeLog.processOrigin)")
        }
    }

    @Test func everyRealChangeIsLoggedInCommitOrderAndNothingElse() throws {
        try withStore { store, _ in
            let raw = try RawDatabase(store.path)
            try Self.foreignLease(raw)
            try store.setValue(.int(1), forKey: "a")
            try store.setValue(.int(1), forKey: "a")  // the same value: nothing
            try store.setValue(.double(0), forKey: "zero")
            try store.setValue(.double(-0.0), forKey: "zero")  // equal in SQL, not the same value
            try store.setValue(.string("1"), forKey: "a")  // another type
            try store.removeValue(forKey: "absent")  // nothing
            try store.apply([.set("b", .int(2)), .remove("a"), .set("c", .int(3))])
            try store.removeAll()
            #expect(try Self.loggedKeys(raw) == ["a", "zero", "zero", "a", "b", "a", "c", "b", "c", "zero"])
        }
    }

    @Test func oldRowsArePrunedButNeverThoseOfTheLastMinute() throws {
        try withStore { store, _ in
            let raw = try RawDatabase(store.path)
            try Self.foreignLease(raw)
            // A batch far larger than the rows kept: all of it stays while it is young.
            try store.apply((0..<1500).map { .set("k\($0)", .int(1)) })
            #expect(try raw.scalar("SELECT count(*) FROM changes") == "1500")
            // Once old, rows more than 1024 behind go at the next multiple of 256.
            try raw.query("UPDATE changes SET time = time - 3600")
            try store.apply((0..<36).map { .set("k\($0)", .int(2)) })
            #expect(try raw.scalar("SELECT count(*) FROM changes") == "1024")
            #expect(try raw.scalar("SELECT min(seq) FROM changes") == "513")
        }
    }

    @Test func anotherProcessesLoggedCommitArrivesAsExternalEventsBeforeTheNextLocalOne() throws {
        try withStore { store, _ in
            let events = EventLog(store)
            let raw = try RawDatabase(store.path)
            try Self.run(
                raw,
                """
                BEGIN;
                INSERT INTO defaults VALUES ('x', 'int', 5), ('y', 'int', 6);
                INSERT INTO changes (key, origin, time) VALUES ('y', 7, 0), ('x', 7, 0);
                COMMIT;
                """)
            // Written at once, before the watch may have read the log: the write reports what
            // came before it first.
            try store.setValue(.int(1), forKey: "local")
            #expect(events.settled(at: 3) == [
                DefaultsChangeEvent(key: "y", newValue: .int(6), origin: .external),
                DefaultsChangeEvent(key: "x", newValue: .int(5), origin: .external),
                DefaultsChangeEvent(key: "local", newValue: .int(1), origin: .local),
            ])
        }
    }

    @Test func aReaderThatMissedRowsReportsEveryKey() throws {
        try withStore { store, _ in
            try store.apply([.set("old", .int(1)), .set("gone", .int(1))])
            let events = EventLog(store)
            // Rows far past the position: those in between were pruned before this process read them.
            try Self.run(
                RawDatabase(store.path),
                """
                BEGIN;
                INSERT INTO defaults VALUES ('new', 'int', 2);
                DELETE FROM defaults WHERE key = 'gone';
                INSERT INTO changes (seq, key, origin, time) VALUES (5000, 'new', 7, 0), (5001, 'gone', 7, 0);
                COMMIT;
                """)
            // As the library's writers do after a commit that logged: wakes the watcher (which
            // otherwise finds the rows at its next tick, or when it happens to read after them).
            ChangeLog.ringDoorbell(path: store.path)
            #expect(Set(events.settled(at: 3)) == [
                DefaultsChangeEvent(key: "old", newValue: .int(1), origin: .external),
                DefaultsChangeEvent(key: "new", newValue: .int(2), origin: .external),
                DefaultsChangeEvent(key: "gone", newValue: nil, origin: .external),
            ])
        }
    }

    @Test func theLeaseIsGivenBackWhenTheLastInstanceCloses() throws {
        try withStore { store, _ in
            let second = try SQLiteProvider(path: store.path)
            let raw = try RawDatabase(store.path)
            let observation = store.observe { _ in }
            #expect(try raw.scalar("SELECT origin FROM watchers") == "\(ChangeLog.processOrigin)")
            store.close()
            #expect(try raw.scalar("SELECT count(*) FROM watchers") == "1")
            second.close()
            #expect(try raw.scalar("SELECT count(*) FROM watchers") == "0")
            observation.cancel()
        }
    }
}
