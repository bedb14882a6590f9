import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@testable import AnyDefaultsSQLite

/// A write that someone observes, or that another process watches, compares the new value with the
/// stored one inside its upsert (``SQLiteValueComparison``): it must agree with `DefaultsValue`'s
/// equality exactly, for the events (one per real change) and the change log (one row per real
/// change).
@Suite struct SQLiteComparingWriteTests {
    /// Pairs of values that are equal as `DefaultsValue`s, though some are stored as other bytes.
    static let equalPairs: [(DefaultsValue, DefaultsValue)] = [
        (.int(7), .int(7)),
        (.bool(true), .bool(true)),
        (.double(1.5), .double(1.5)),
        (.double(0), .double(0)),
        (.double(-0.0), .double(-0.0)),
        (.double(.nan), .double(.nan)),
        (.double(.nan), .double(-.nan)),
        (.date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 0))),
        (.data(Data([1, 2, 3])), .data(Data([1, 2, 3]))),
        (.data(Data()), .data(Data())),
        (.string(""), .string("")),
        (.string("plain"), .string("plain")),
        (.array([.string("caf\u{E9}"), .double(0)]), .array([.string("caf\u{E9}"), .double(0)])),
        (.dictionary(["caf\u{E9}": .int(1)]), .dictionary(["caf\u{E9}": .int(1)])),
    ]

    /// Pairs of different values whose bytes in SQL compare equal, or whose types differ only.
    static let differentPairs: [(DefaultsValue, DefaultsValue)] = [
        (.int(1), .bool(true)),
        (.bool(false), .int(0)),
        (.double(0), .double(-0.0)),
        (.double(-0.0), .double(0)),
        (.double(5), .date(Date(timeIntervalSinceReferenceDate: 5))),
        (.date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -0.0))),
        (.double(.nan), .double(0)),
        (.data(Data("text".utf8)), .string("text")),
        (.string("a"), .string("b")),
        (.string("caf\u{E9}"), .string("cafe")),
        // Canonically equivalent strings are different values: a store keeps the spelling written.
        (.string("caf\u{E9}"), .string("cafe\u{301}")),
        (.string("\u{212A}"), .string("K")),
        (.array([.string("caf\u{E9}"), .double(0)]), .array([.string("cafe\u{301}"), .double(0)])),
        (.dictionary(["caf\u{E9}": .int(1)]), .dictionary(["cafe\u{301}": .int(1)])),
        (.array([.double(0)]), .array([.double(-0.0)])),
        (.dictionary(["a": .int(1)]), .dictionary(["a": .int(2)])),
        (.array([]), .dictionary([:])),
    ]

    @Test(arguments: 0..<equalPairs.count)
    func rewritingAnEqualValueEmitsNothingAndLogsNothing(_ index: Int) throws {
        let (stored, written) = Self.equalPairs[index]
        try withStore { store, _ in
            let raw = try RawDatabase(store.path)
            try SQLiteChangeLogTests.foreignLease(raw)
            try store.setValue(stored, forKey: "k")
            let events = EventLog(store)
            try store.setValue(written, forKey: "k")
            try store.apply([.set("k", written), .set("other", .int(1))])
            #expect(events.all.map(\.key) == ["other"])
            #expect(try SQLiteChangeLogTests.loggedKeys(raw) == ["k", "other"])
            // The value stored first stays, as it was.
            #expect(try store.value(forKey: "k") == stored)
        }
    }

    @Test(arguments: 0..<differentPairs.count)
    func writingADifferentValueIsOneChange(_ index: Int) throws {
        let (stored, written) = Self.differentPairs[index]
        try withStore { store, _ in
            let raw = try RawDatabase(store.path)
            try SQLiteChangeLogTests.foreignLease(raw)
            try store.setValue(stored, forKey: "k")
            let events = EventLog(store)
            try store.apply([.set("k", written)])
            #expect(events.all == [DefaultsChangeEvent(key: "k", newValue: written)])
            #expect(try SQLiteChangeLogTests.loggedKeys(raw) == ["k", "k"])
            let read = try #require(try store.value(forKey: "k"))
            #expect(read == written)
        }
    }

    /// Only logged: no one observes in this process, yet the log holds only the real changes.
    @Test func anUnobservedWatchedStoreLogsOnlyRealChanges() throws {
        try withStore { store, _ in
            let raw = try RawDatabase(store.path)
            try SQLiteChangeLogTests.foreignLease(raw)
            try store.setValue(.string("caf\u{E9}"), forKey: "s")
            try store.setValue(.string("cafe\u{301}"), forKey: "s")
            try store.apply([.set("s", .string("caf\u{E9}")), .set("n", .int(1)), .set("n", .int(1)), .remove("absent")])
            try store.removeValue(forKey: "n")
            #expect(try SQLiteChangeLogTests.loggedKeys(raw) == ["s", "s", "s", "n", "n"])
        }
    }

    /// A damaged stored value (the wrong SQLite kind for its type) is overwritten and reported,
    /// even when its SQL value equals the new one.
    @Test func aDamagedValueIsOverwrittenAndReported() throws {
        try withStore { store, _ in
            try store.setValue(.int(0), forKey: "seed")
            let raw = try RawDatabase(store.path)
            try raw.query("INSERT INTO defaults VALUES ('real', 'double', 3), ('text', 'string', CAST('x' AS BLOB))")
            let events = EventLog(store)
            try store.apply([.set("real", .double(3)), .set("text", .string("x"))])
            #expect(events.all.map(\.key) == ["real", "text"])
            #expect(try store.value(forKey: "real") == .double(3))
            #expect(try store.value(forKey: "text") == .string("x"))
        }
    }
}
