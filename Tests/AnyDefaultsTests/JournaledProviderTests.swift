import AnyDefaults
@testable import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

/// A journal in front of each store kept in a file: writes that survive a killed process, a
/// reference model under generated operations (with journals small enough to fill and records
/// too large for them), one process at a time, and the configuration that asks for it.
@Suite(.ownThreads) struct JournaledProviderTests {
    static let schemes = ["json", "sqlite", "lmdb"]

    /// The store string of `scheme` in `directory`, without a cache.
    static func store(_ scheme: String, in directory: TemporaryDirectory) -> String {
        "\(scheme):" + directory.path(scheme == "lmdb" ? "store" : "store.\(scheme)") + "?cache=off"
    }

    /// The store alone, no journal.
    static func plain(_ scheme: String, in directory: TemporaryDirectory) throws -> any DefaultsProvider {
        try ProviderRegistry.standard.makeProvider(store(scheme, in: directory))
    }

    static func journaled(_ scheme: String, in directory: TemporaryDirectory, options: JournalOptions) throws -> any DefaultsProvider {
        try journal(plain(scheme, in: directory), options: options)
    }

    private static func journal<Provider: DefaultsProvider>(_ provider: Provider, options: JournalOptions) throws -> any DefaultsProvider {
        try provider.journaled(options: options)
    }

    /// A killed process's acknowledged writes are in the journal only (the store without the
    /// journal does not have them), and the next open applies them to the store.
    @Test(arguments: JournaledProviderTests.schemes)
    func aKilledProcesssWritesReachTheStoreAtTheNextOpen(scheme: String) throws {
        try withTemporaryDirectory { directory in
            try Self.plain(scheme, in: directory).apply([.set("gone", .int(5)), .set("kept", .int(6))])
            let journaled = Self.store(scheme, in: directory) + "&journal=on"
            let child = try ChildProcess.run("TestChild", ["crash", journaled, "a=1", "b:string=x", "-gone"])
            #expect(child.wasSignaled)
            do {
                let store = try Self.plain(scheme, in: directory)
                #expect(try store.value(forKey: "a") == nil)
                #expect(try store.value(forKey: "gone") == .int(5))
            }
            do {
                let store = try ProviderRegistry.standard.makeProvider(journaled)
                #expect(try store.allValues() == ["a": .int(1), "b": .string("x"), "kept": .int(6)])
            }
            // Applied when the journal opened, so the store alone has them now.
            #expect(try Self.plain(scheme, in: directory).allValues() == ["a": .int(1), "b": .string("x"), "kept": .int(6)])
        }
    }

    /// Generated operations against a dictionary: every read after every operation, journals of
    /// 4 KiB that fill every few writes, values larger than the journal (written to the store
    /// directly), reopening, and the store alone at the end.
    @Test(arguments: JournaledProviderTests.schemes, [1, 2, 3] as [UInt64])
    func aJournaledStoreBehavesLikeADictionary(scheme: String, seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            var random = SeededGenerator(seed: seed)
            var model: [String: DefaultsValue] = [:]
            let options = JournalOptions(capacity: 4096, flushInterval: .seconds(3600))
            var store = try Self.journaled(scheme, in: directory, options: options)
            let keys = (0..<12).map { "k.\($0)" }
            func value() -> DefaultsValue {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: .int(Int64.random(in: -1000...1000, using: &random))
                case 1: .string(String(repeating: "é", count: Int.random(in: 0...40, using: &random)))
                case 2: .data(Data(repeating: 1, count: Int.random(in: 5000...9000, using: &random)))  // larger than the journal
                case 3: .array([.bool(true), .double(-0.0)])
                case 4: .double(Double(Int.random(in: 0...9, using: &random)) / 4)
                default: .dictionary(["n": .int(Int64.random(in: 0...3, using: &random))])
                }
            }
            for step in 0..<400 {
                let key = keys.randomElement(using: &random) ?? "k.0"
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    let new = value()
                    try store.setValue(new, forKey: key)
                    model[key] = new
                case 4:
                    #expect(try store.removeValueIfPresent(forKey: key) == (model.removeValue(forKey: key) != nil))
                case 5:
                    let changes: [DefaultsChange] = (0..<3).map { _ in
                        Bool.random(using: &random) ? .set(keys.randomElement(using: &random) ?? key, value()) : .remove(keys.randomElement(using: &random) ?? key)
                    }
                    try store.apply(changes)
                    for change in changes { model[change.key] = change.value }
                case 6:
                    let expected: DefaultsValue? = Bool.random(using: &random) ? model[key] : .int(-1)
                    let applied = try store.apply([.set(key, .int(Int64(step)))], ifUnchanged: [key: expected])
                    #expect(applied == (model[key] == expected))
                    if applied { model[key] = .int(Int64(step)) }
                case 7:
                    if Int.random(in: 0..<8, using: &random) == 0 {
                        try store.removeAll()
                        model.removeAll()
                    } else {
                        let expected = model.filter { _ in Bool.random(using: &random) }
                        let removed = try store.removeValues(ifUnchanged: expected)
                        #expect(Set(removed) == Set(expected.keys))
                        for key in removed { model[key] = nil }
                    }
                case 8:
                    // Reopen: the journal is applied to the store when the last instance goes.
                    store = try Self.journaled(scheme, in: directory, options: options)
                default:
                    #expect(try store.keys(withPrefix: "k.1").sorted() == model.keys.filter { $0.hasPrefix("k.1") }.sorted())
                }
                #expect(try store.allValues() == model, "step \(step)")
                #expect(try store.value(forKey: key) == model[key])
            }
            try store.synchronize()
            #expect(try Self.plain(scheme, in: directory).allValues() == model)
        }
    }

    /// The store belongs to one process at a time: another process opening it with its journal
    /// is told so, and one opening it without the journal reads it as of the last flush.
    @Test(arguments: JournaledProviderTests.schemes)
    func anotherProcessCannotOpenTheJournal(scheme: String) throws {
        try withTemporaryDirectory { directory in
            let journaled = Self.store(scheme, in: directory) + "&journal=on"
            let store = try ProviderRegistry.standard.makeProvider(journaled)
            try store.setValue(.int(1), forKey: "a")
            let refused = try ChildProcess.run("TestChild", ["get", journaled, "a"])
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("one process at a time"), "\(refused.standardError)")
            try store.synchronize()
            let plain = try ChildProcess.run("TestChild", ["get", Self.store(scheme, in: directory), "a"])
            #expect(plain.standardOutput.contains("int(1)") || plain.standardOutput.contains("1"), "\(plain.standardOutput)")
            withExtendedLifetime(store) {}
        }
    }

    /// The journal reaches the store on its own a moment after a write (the flush interval):
    /// another process reading the store without the journal sees the write then.
    @Test(arguments: JournaledProviderTests.schemes)
    func theJournalReachesTheStoreAfterTheFlushInterval(scheme: String) throws {
        try withTemporaryDirectory { directory in
            let options = JournalOptions(flushInterval: .milliseconds(50))
            let store = try Self.journaled(scheme, in: directory, options: options)
            try store.setValue(.string("flushed"), forKey: "a")
            var seen = false
            for _ in 0..<100 where !seen {
                let read = try ChildProcess.run("TestChild", ["get", Self.store(scheme, in: directory), "a"])
                seen = read.standardOutput.contains("flushed")
                if !seen { usleep(50_000) }
            }
            #expect(seen)
            withExtendedLifetime(store) {}
        }
    }

    /// A store that records the calls a flush makes and can fail its batches.
    final class FlakyStore: DefaultsProvider {
        let inner: SQLiteProvider
        let calls = Recorder<String>()
        let failing = Mutex(false)
        /// Fails the batch with this number (1 for the next one), once.
        let failingBatch = Mutex<Int?>(nil)

        init(_ inner: SQLiteProvider) { self.inner = inner }

        var capabilities: DefaultsCapabilities { inner.capabilities }
        var storeIdentity: DefaultsStoreIdentity? { inner.storeIdentity }
        func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try inner.value(forKey: key) }
        func keys() throws(DefaultsError) -> [String] { try inner.keys() }
        func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
            calls.record("apply")
            let failsNow = failingBatch.withLock { countdown in
                guard let left = countdown else { return false }
                countdown = left == 1 ? nil : left - 1
                return left == 1
            }
            if failing.withLock({ $0 }) || failsNow { throw DefaultsError(.storageFull, "full", backend: "Flaky") }
            try inner.apply(changes)
        }
        func makeDurable() throws(DefaultsError) {
            calls.record("makeDurable")
            try inner.makeDurable()
        }
        func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { inner.observe(handler) }
    }

    /// A flush applies the journal to the store, makes the store durable, and only then empties
    /// the journal: a flush that fails leaves every write in the journal, and the next open
    /// applies them.
    @Test func aFlushThatFailsLeavesTheWritesInTheJournal() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            do {
                let flaky = FlakyStore(try SQLiteProvider(path: path))
                let store = try flaky.journaled(options: JournalOptions(flushInterval: .seconds(3600)))
                try store.setValue(.int(1), forKey: "a")
                try store.synchronize()
                #expect(flaky.calls.all == ["apply", "makeDurable"])
                try store.setValue(.int(2), forKey: "a")
                try store.setValue(.int(3), forKey: "b")
                flaky.failing.withLock { $0 = true }
                #expect(throws: DefaultsError.self) { try store.synchronize() }
                #expect(try store.value(forKey: "a") == .int(2))
                #expect(try SQLiteProvider(path: path).allValues() == ["a": .int(1)])
            }
            // The last instance went (its flush failed too); the next open applies the journal.
            let reopened = try SQLiteProvider(path: path).journaled()
            #expect(try reopened.allValues() == ["a": .int(2), "b": .int(3)])
            #expect(try SQLiteProvider(path: path).allValues() == ["a": .int(2), "b": .int(3)])
        }
    }

    /// A value too large for the journal goes to the store directly, after the journal was
    /// applied. If the store refuses it, the acknowledged value before it is what the store keeps
    /// (the journal's flush must not have applied the refused one).
    @Test func aRefusedWriteTooLargeForTheJournalLeavesTheAcknowledgedValue() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            do {
                let flaky = FlakyStore(try SQLiteProvider(path: path))
                let store = try flaky.journaled(options: JournalOptions(capacity: 4096, flushInterval: .seconds(3600)))
                try store.setValue(.string("acknowledged"), forKey: "k")
                // The flush of the journal is the first batch, the direct write the second.
                flaky.failingBatch.withLock { $0 = 2 }
                #expect(throws: DefaultsError.self) { try store.setValue(.data(Data(count: 6000)), forKey: "k") }
                #expect(try store.value(forKey: "k") == .string("acknowledged"))
            }
            #expect(try SQLiteProvider(path: path).value(forKey: "k") == .string("acknowledged"))
        }
    }

    /// The last instance's final flush may still run (on the timer's thread) when the store is
    /// opened again in the same process: the open waits for it instead of reporting `busy`.
    @Test(arguments: JournaledProviderTests.schemes)
    func reopeningInOneProcessIsNeverBusy(scheme: String) throws {
        try withTemporaryDirectory { directory in
            var random = SeededGenerator(seed: 5)
            for round in 0..<150 {
                let store = try Self.journaled(scheme, in: directory, options: JournalOptions(flushInterval: .microseconds(Int64.random(in: 1...3000, using: &random))))
                try store.setValue(.int(Int64(round)), forKey: "round")
                #expect(try store.value(forKey: "round") == .int(Int64(round)))
                usleep(UInt32.random(in: 0...3000, using: &random))
            }
            // The last one's final flush may run a moment after it went; the next open waits for it.
            let last = try Self.journaled(scheme, in: directory, options: JournalOptions())
            #expect(try last.value(forKey: "round") == .int(149))
            try last.synchronize()
            #expect(try Self.plain(scheme, in: directory).value(forKey: "round") == .int(149))
        }
    }

    /// A record that no write could have made (an empty key), with a valid checksum: the open
    /// fails as `corrupted` and leaves the journal and the store as they were, instead of
    /// failing every flush later.
    @Test func aJournalRecordThatNoWriteCouldHaveMadeIsCorrupted() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.int(1), forKey: "kept")
            do {
                let file = try JournalFile(path: path + ".journal", capacity: 4096, like: path, backend: "Journal")
                var payload: [UInt8] = []
                JournalRecord.appendSet("", .int(2), to: &payload)
                #expect(payload.withUnsafeBytes { file.append($0) })
            }
            let before = try Data(contentsOf: URL(fileURLWithPath: path + ".journal"))
            do {
                _ = try SQLiteProvider(path: path).journaled()
                Issue.record("a journal with an empty key was replayed")
            } catch {
                #expect((error as? DefaultsError)?.code == .corrupted)
            }
            // Its records as they were (the open may have given the file the room it asks for).
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".journal")).prefix(before.count) == before)
            #expect(try SQLiteProvider(path: path).allValues() == ["kept": .int(1)])
        }
    }

    @Test func twoInstancesInOneProcessShareTheJournal() throws {
        try withTemporaryDirectory { directory in
            let journaled = Self.store("sqlite", in: directory) + "&journal=on"
            let first = try ProviderRegistry.standard.makeProvider(journaled)
            let second = try ProviderRegistry.standard.makeProvider(journaled)
            let events = Recorder<DefaultsChangeEvent>()
            let observation = second.observe { events.record($0) }
            try first.setValue(.int(3), forKey: "shared")
            #expect(try second.value(forKey: "shared") == .int(3))
            #expect(events.all.map(\.key) == ["shared"])
            observation.cancel()
        }
    }

    @Test func theConfigurationAsksForAJournalOnlyInFrontOfAFile() throws {
        try withTemporaryDirectory { directory in
            for text in ["memory:?journal=on", "userdefaults:journal.test?journal=on"] {
                #expect(throws: DefaultsError.self) { try ProviderRegistry.standard.makeProvider(text) }
            }
            do {
                _ = try ProviderRegistry.standard.makeProvider(Self.store("sqlite", in: directory) + "&journal=sometimes")
                Issue.record("journal=sometimes was accepted")
            } catch {
                #expect((error as? DefaultsError)?.code == .invalidConfiguration)
            }
            for option in ["journalsize=4096", "journal=off&journalsize=4096", "journal=on&journalsize=100", "journal=on&journalsize=big"] {
                #expect(throws: DefaultsError.self, "\(option)") {
                    try ProviderRegistry.standard.makeProvider(Self.store("lmdb", in: directory) + "&" + option)
                }
            }
            let sized = try ProviderRegistry.standard.makeProvider(Self.store("json", in: directory) + "&journal=on&journalsize=8192")
            var info = stat()
            #expect(stat(directory.path("store.json.journal"), &info) == 0 && info.st_size == 8192)
            withExtendedLifetime(sized) {}
            let store = try ProviderRegistry.standard.makeProvider(Self.store("sqlite", in: directory) + "&journal=on")
            #expect(store is JournaledProvider<SQLiteProvider>)
            #expect(FileManager.default.fileExists(atPath: directory.path("store.sqlite.journal")))
            let off = try ProviderRegistry.standard.makeProvider(Self.store("json", in: directory) + "&journal=off")
            #expect(off is JSONFileProvider)
            #expect(store.capabilities == [.persistent, .atomicBatch])
        }
    }
}
