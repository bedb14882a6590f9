import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@testable import AnyDefaultsSQLite

@Suite struct SQLiteStorageFormatTests {
    @Test func valuesUseSQLiteStorageClassesTheShellCanShow() throws {
        try withStore { store, directory in
            let path = store.path
            try store.apply(edgeValues.map { .set($0.key, $0.value) })
            let rows = try RawDatabase(path).query("SELECT key, type, typeof(value) FROM defaults")
            let expected: [String: (String, String)] = [
                "int.min": ("int", "integer"), "bool.true": ("bool", "integer"), "double.third": ("double", "real"),
                "double.negativeZero": ("double", "real"), "double.nan": ("double", "null"),
                "string.unicode": ("string", "text"), "string.empty": ("string", "text"),
                "data.bytes": ("data", "blob"), "data.empty": ("data", "blob"), "date.now": ("date", "real"),
                "array.everything": ("array", "blob"), "dictionary.empty": ("dictionary", "blob"),
            ]
            #expect(Set(rows.map { $0[0] }) == Set(edgeValues.keys))
            for row in rows {
                guard let (type, storage) = expected[row[0]] else { continue }
                #expect(row[1] == type, "\(row[0])")
                #expect(row[2] == storage, "\(row[0])")
            }
            let raw = try RawDatabase(path)
            #expect(try raw.scalar("SELECT value FROM defaults WHERE key = 'int.max'") == "\(Int64.max)")
            #expect(try raw.scalar("SELECT value FROM defaults WHERE key = 'double.one'") == "1.0")
            #expect(try raw.scalar("PRAGMA application_id") == "\(SQLiteSchema.applicationID)")
            #expect(try raw.scalar("PRAGMA user_version") == "2")
            #expect(try raw.scalar("PRAGMA journal_mode") == "wal")
        }
    }

    @Test func valuesWrittenWithTheShellAreRead() throws {
        try withStore { store, directory in
            let path = store.path
            try RawDatabase(path).query(
                """
                INSERT INTO defaults VALUES ('shell.int', 'int', 7), ('shell.text', 'string', 'hi'),
                ('shell.flag', 'bool', 1), ('shell.nan', 'double', NULL), ('shell.data', 'data', x'00ff')
                """)
            #expect(try store.value(forKey: "shell.int") == .int(7))
            #expect(try store.value(forKey: "shell.text") == .string("hi"))
            #expect(try store.value(forKey: "shell.flag") == .bool(true))
            #expect(try store.value(forKey: "shell.nan") == .double(.nan))
            #expect(try store.value(forKey: "shell.data") == .data(Data([0, 255])))
        }
    }

    @Test func aDamagedRowIsAnErrorForItsKeyOnly() throws {
        try withStore { store, directory in
            let path = store.path
            try store.setValue(.int(1), forKey: "good")
            try RawDatabase(path).query(
                """
                INSERT INTO defaults VALUES ('text-as-int', 'int', 'seven'), ('bad-blob', 'array', x'07ff'),
                ('unknown-type', 'float', 1.5), ('bool-two', 'bool', 2), ('bad-utf8', 'string', CAST(x'ff' AS TEXT)),
                ('wrong-container', 'dictionary', x'0700')
                """)
            for key in ["text-as-int", "bad-blob", "unknown-type", "bool-two", "bad-utf8", "wrong-container"] {
                let error = #expect(throws: DefaultsError.self, "\(key)") { try store.value(forKey: key) }
                #expect(error?.code == .corrupted, "\(key)")
                #expect(error?.key == key)
                #expect(error?.path == store.path)
            }
            #expect(try store.value(forKey: "good") == .int(1))
            #expect(throws: DefaultsError.self) { try store.allValues() }
            // A damaged value can still be overwritten or removed, also while observed.
            try store.setValue(.int(7), forKey: "text-as-int")
            try store.removeValue(forKey: "bad-blob")
            #expect(try store.value(forKey: "text-as-int") == .int(7))
            let log = EventLog(store)
            try store.setValue(.int(2), forKey: "bool-two")
            try store.removeValue(forKey: "unknown-type")
            #expect(log.all == [
                DefaultsChangeEvent(key: "bool-two", newValue: .int(2)),
                DefaultsChangeEvent(key: "unknown-type", newValue: nil),
            ])
        }
    }

    @Test func equalDictionariesEncodeToEqualBytes() throws {
        try withStore { store, directory in
            let path = store.path
            var forward: [String: DefaultsValue] = [:]
            var backward: [String: DefaultsValue] = [:]
            for index in 0..<50 { forward["k\(index)"] = .int(Int64(index)) }
            for index in (0..<50).reversed() { backward["k\(index)"] = .int(Int64(index)) }
            try store.apply([.set("forward", .dictionary(forward)), .set("backward", .dictionary(backward))])
            let hex = try RawDatabase(path).query("SELECT hex(value) FROM defaults ORDER BY key").map { $0[0] }
            #expect(hex.count == 2)
            #expect(hex.first == hex.last)
        }
    }

    @Test func aNewerSchemaVersionIsRefusedAndLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.string("kept"), forKey: "k")
            try RawDatabase(path).query("PRAGMA user_version = 3")
            let before = try Data(contentsOf: URL(fileURLWithPath: path))

            let error = #expect(throws: DefaultsError.self) { try SQLiteProvider(path: path) }
            #expect(error?.code == .incompatibleFormat)
            #expect(error?.path == path)
            #expect(error.map { "\($0)".contains("version 3") } == true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(try RawDatabase(path).scalar("SELECT type FROM defaults WHERE key = 'k'") == "string")
        }
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let foreign = directory.path("foreign.sqlite")
            try RawDatabase(foreign).query("CREATE TABLE people (name TEXT)")
            let identified = directory.path("identified.sqlite")
            try RawDatabase(identified).query("PRAGMA application_id = 42")
            for path in [foreign, identified] {
                let before = try Data(contentsOf: URL(fileURLWithPath: path))
                let error = #expect(throws: DefaultsError.self) { try SQLiteProvider(path: path) }
                #expect(error?.code == .incompatibleFormat)
                #expect(error?.path == path)
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
                #expect(try RawDatabase(path).scalar("PRAGMA journal_mode") == "delete")
            }
        }
    }

    @Test func failedOpensAndReleasedStoresLeaveNoFileOpen() throws {
        try withTemporaryDirectory { directory in
            let damaged = directory.path("damaged.sqlite")
            _ = try SQLiteProvider(path: damaged)
            // A view reads like the table, so some statements prepare before one fails.
            let raw = try RawDatabase(damaged)
            try raw.query("DROP TABLE defaults")
            try raw.query("CREATE VIEW defaults AS SELECT 'k' AS key, 'int' AS type, 1 AS value")
            let notSQLite = directory.path("notes.txt")
            try Data("not a database".utf8).write(to: URL(fileURLWithPath: notSQLite))
            let good = directory.path("good.sqlite")

            func openFiles() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/dev/fd").count }
            let before = try openFiles()
            for _ in 0..<50 {
                #expect(throws: DefaultsError.self) { try SQLiteProvider(path: damaged) }
                #expect(throws: DefaultsError.self) { try SQLiteProvider(path: notSQLite) }
                try SQLiteProvider(path: good).setValue(.int(1), forKey: "k")
            }
            // Tests running at the same time open files too; a leak would be one per attempt.
            #expect(try openFiles() < before + 25)
        }
    }

    @Test func aMissingTableIsReportedAsDamage() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            _ = try SQLiteProvider(path: path)
            try RawDatabase(path).query("DROP TABLE defaults")
            let error = #expect(throws: DefaultsError.self) { try SQLiteProvider(path: path) }
            #expect(error?.code == .corrupted)
            #expect(error?.path == path)
        }
    }
}
