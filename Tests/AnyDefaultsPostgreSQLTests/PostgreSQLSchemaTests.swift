import AnyDefaults
import AnyDefaultsTesting
import Foundation
import Synchronization
import Testing
import TestSupport

/// Schema version 2 (Docs/Backends.md, "PostgreSQL", "Schema"): a store of version 1 is migrated
/// in place by the first client of version 2 that connects, keeping every value bit for bit, also
/// when several clients connect at once; and a key longer than the inline limit, identified by
/// `0xFF` and its SHA-256, never shares a row with a short key, whatever the short key's bytes.
@Suite(.ownThreads) struct PostgreSQLSchemaTests {
    /// The tables of version 1, as that version created them.
    private static let version1 = """
        CREATE TABLE anydefaults_schema (version integer NOT NULL);
        CREATE TABLE anydefaults_namespaces (namespace text PRIMARY KEY, revision bigint NOT NULL, floor bigint NOT NULL DEFAULT 0);
        CREATE TABLE anydefaults_values (
            namespace text NOT NULL, key bytea NOT NULL, digest bytea GENERATED ALWAYS AS (sha256(key)) STORED,
            value bytea, revision bigint NOT NULL, PRIMARY KEY (namespace, digest));
        CREATE INDEX anydefaults_values_by_revision ON anydefaults_values (namespace, revision);
        INSERT INTO anydefaults_schema (version) VALUES (1);
        """

    private static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// A database of its own, and the store string of `namespace` in it (another application
    /// name is another connection, as another machine would have).
    private static func database(_ cluster: PostgreSQLCluster) throws -> String {
        let database = "schema_\(UUID().uuidString.prefix(8).lowercased())"
        try cluster.psql("CREATE DATABASE \(database)")
        return database
    }

    private static func store(_ cluster: PostgreSQLCluster, _ database: String, _ namespace: String, application: String = "AnyDefaults") -> String {
        cluster.storeString(namespace: namespace, options: "&applicationname=\(application)")
            .replacingOccurrences(of: "database=postgres", with: "database=\(database)")
    }

    /// Every row as text, with the key's UTF-8 (`full_key` in version 2) and the value's bytes.
    private static func rows(_ cluster: PostgreSQLCluster, _ database: String, keyColumn: String) throws -> [String] {
        try cluster.psql(
            "SELECT namespace || ' ' || encode(\(keyColumn), 'hex') || ' ' || coalesce(encode(value, 'hex'), 'NULL') || ' ' || revision FROM anydefaults_values",
            database: database
        ).split(separator: "\n").map(String.init).sorted()
    }

    @Test func aVersion1StoreIsMigratedKeepingEveryValueBitForBitWhileClientsOpenAtOnce() throws {
        let cluster = try PostgreSQLCluster.shared()
        let database = try Self.database(cluster)
        try cluster.psql(Self.version1, database: database)
        // What version 1 wrote: every edge value small enough for a command line, keys at and
        // around the inline limit and far over it, keys with NUL and outside ASCII, a removal
        // marker, and another namespace.
        var values: [String: DefaultsValue] = [:]
        for (index, edge) in ConformanceValues.edgeCases.enumerated() where BinaryValueCodec.encode(edge.value).count <= 4096 {
            values["edge.\(index)"] = edge.value
        }
        values[String(repeating: "a", count: 1024)] = .int(1024)
        values[String(repeating: "b", count: 1025)] = .int(1025)
        values[String(repeating: "é", count: 2000)] = .string("long")   // 4000 bytes of UTF-8
        values["nul\u{0}key"] = .double(-0.0)
        values["café"] = .data(Data([0, 0xff]))
        var inserts: [String] = []
        for (key, value) in values {
            inserts.append("('one', '\\x\(Self.hex(key.utf8))'::bytea, '\\x\(Self.hex(BinaryValueCodec.encode(value)))'::bytea, 3)")
        }
        inserts.append("('one', '\\x\(Self.hex("gone".utf8))'::bytea, NULL, 4)")
        inserts.append("('two', '\\x6b'::bytea, '\\x\(Self.hex(BinaryValueCodec.encode(.int(2))))'::bytea, 1)")
        for chunk in stride(from: 0, to: inserts.count, by: 20) {
            try cluster.psql(
                "INSERT INTO anydefaults_values (namespace, key, value, revision) VALUES " + inserts[chunk..<min(chunk + 20, inserts.count)].joined(separator: ","),
                database: database)
        }
        try cluster.psql("INSERT INTO anydefaults_namespaces (namespace, revision) VALUES ('one', 5), ('two', 1)", database: database)
        let before = try Self.rows(cluster, database, keyColumn: "key")
        #expect(before.count == values.count + 2)

        // Clients of this version on connections of their own, opening at once: one migrates,
        // the others wait for it on the lock and find it done.
        let opened = Mutex<[Int: Result<PostgreSQLProvider, DefaultsError>]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let result = Result { () throws(DefaultsError) in
                try PostgreSQLProvider(url: Self.store(cluster, database, index == 3 ? "two" : "one", application: "opener\(index)"))
            }
            opened.withLock { $0[index] = result }
        }
        let providers = try (0..<4).map { index in try #require(opened.withLock { $0[index] }).get() }

        #expect(try cluster.scalar("SELECT version FROM anydefaults_schema", database: database) == "2")
        #expect(try Self.rows(cluster, database, keyColumn: "coalesce(full_key, key)") == before, "every row keeps its key, value and revision")
        let indexes = try cluster.scalar("SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'anydefaults_values'", database: database)
        #expect(indexes == "anydefaults_values_pkey", "no index on the revision")
        #expect(try cluster.scalar("SELECT count(*) FROM information_schema.columns WHERE column_name = 'digest'", database: database) == "0")
        // The long keys (and only they) are identified by 0xFF and their digest.
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_values WHERE full_key IS NOT NULL AND key = '\\xff'::bytea || sha256(full_key)", database: database) == "2")

        // Each client reads every value bit for bit.
        for provider in providers.prefix(3) {
            let read = try provider.allValues()
            #expect(Set(read.keys) == Set(values.keys))
            for (key, value) in values {
                #expect(read[key].map { BinaryValueCodec.encode($0) } == BinaryValueCodec.encode(value), "\(key.prefix(20))")
            }
        }
        #expect(try providers[3].allValues() == ["k": .int(2)])

        // This version's writes find the migrated rows (no second row for a key) and other
        // clients hear them through the change log.
        let events = EventLog(providers[1])
        let long = String(repeating: "é", count: 2000)
        try providers[0].apply([.set(long, .int(7)), .remove(String(repeating: "b", count: 1025)), .set("café", .bool(true))])
        #expect(waitUntil { events.all.count == 3 })
        #expect(try providers[1].value(forKey: long) == .int(7))
        #expect(try providers[1].value(forKey: String(repeating: "b", count: 1025)) == nil)
        #expect(events.all.allSatisfy { $0.origin == .external })
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_values WHERE namespace = 'one'", database: database) == "\(values.count + 1)")
        for provider in providers { provider.close() }
    }

    @Test func theSchemaIsCreatedAtVersion2AndANewerOneIsRefused() throws {
        let cluster = try PostgreSQLCluster.shared()
        let database = try Self.database(cluster)
        let provider = try PostgreSQLProvider(url: Self.store(cluster, database, "s"))
        try provider.setValue(.int(1), forKey: "k")
        provider.close()
        #expect(try cluster.scalar("SELECT version FROM anydefaults_schema", database: database) == "2")
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_changes", database: database) == "1")
        try cluster.psql("UPDATE anydefaults_schema SET version = 3", database: database)
        let refused = #expect(throws: DefaultsError.self) { try PostgreSQLProvider(url: Self.store(cluster, database, "s")) }
        #expect(refused?.code == .incompatibleFormat)
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_values", database: database) == "1")
    }

    /// Long keys of generated content and lengths, beside short keys made from the bytes of their
    /// IDs in every form a short key could take (the ID read as Latin-1, decoded as UTF-8 with
    /// replacement characters, its digest alone decoded so, the digest in hex): each key keeps its
    /// own row and value, written in one batch and one by one, read by the writer, by a client
    /// that catches up and by one that loads whole, and removed without touching the others.
    @Test func longKeysAndShortKeysMadeOfTheirIDsNeverCollide() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let writer = try PostgreSQLProvider(url: cluster.storeString(namespace: namespace))
        let listener = try openOverTCP(cluster, namespace: namespace)
        var generator = SeededGenerator(seed: 21)
        let alphabet: [Character] = ["a", "Z", "0", ".", "é", "ß", "€", "𝄞", "\u{0}", " "]
        var longKeys: [String] = []
        for length in [1025, 1026, 1100, 2047, 3000, 9000] {
            var key = ""
            while key.utf8.count < length { key.append(alphabet[Int(generator.next() % UInt64(alphabet.count))]) }
            longKeys.append(key)
        }
        try writer.apply(longKeys.enumerated().map { .set($1, .int(Int64($0))) })
        // The IDs the server made for them.
        let ids = try cluster.psql(
            "SELECT encode(key, 'hex') FROM anydefaults_values WHERE namespace = '\(namespace)' AND full_key IS NOT NULL ORDER BY full_key")
            .split(separator: "\n").map { text in
                stride(from: 0, to: text.count, by: 2).compactMap { UInt8(text.dropFirst($0).prefix(2), radix: 16) }
            }
        try #require(ids.count == longKeys.count)
        var shortKeys: [String] = []
        for id in ids {
            #expect(id.count == 33 && id.first == 0xff)
            shortKeys.append(String(String.UnicodeScalarView(id.map { Unicode.Scalar($0) })))
            shortKeys.append(String(decoding: id, as: UTF8.self))
            shortKeys.append(String(decoding: id.dropFirst(), as: UTF8.self))
            shortKeys.append(Self.hex(id))
            shortKeys.append(Self.hex(id.dropFirst()))
        }
        shortKeys = shortKeys.map { $0.precomposedStringWithCanonicalMapping }
        for (index, key) in shortKeys.enumerated() { try writer.setValue(.int(Int64(1000 + index)), forKey: key) }
        var expected: [String: DefaultsValue] = [:]
        for (index, key) in longKeys.enumerated() { expected[key] = .int(Int64(index)) }
        for (index, key) in shortKeys.enumerated() { expected[key] = .int(Int64(1000 + index)) }
        #expect(expected.count == longKeys.count + shortKeys.count)

        #expect(try writer.allValues() == expected)
        try listener.refresh()
        #expect(try listener.allValues() == expected)
        #expect(try openOverTCP(cluster, namespace: namespace).allValues() == expected)
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_values WHERE namespace = '\(namespace)'") == "\(expected.count)")
        // No short key's row starts with 0xFF; every long key's row is 0xFF and its digest.
        #expect(try cluster.scalar(
            "SELECT count(*) FROM anydefaults_values WHERE namespace = '\(namespace)' AND (full_key IS NULL) = (get_byte(key, 0) = 255)") == "0")

        // Removing the long keys leaves the short ones, and the other way.
        try writer.apply(longKeys.map { .remove($0) })
        for key in longKeys { expected[key] = nil }
        try listener.refresh()
        #expect(try listener.allValues() == expected)
        for key in longKeys { try writer.setValue(.bool(true), forKey: key) }
        try writer.apply(shortKeys.map { .remove($0) })
        try listener.refresh()
        #expect(try listener.allValues() == Dictionary(uniqueKeysWithValues: longKeys.map { ($0, DefaultsValue.bool(true)) }))
    }
}

extension PostgreSQLCluster {
    /// The one value a query returns, as psql prints it, without the newline.
    func scalar(_ sql: String, database: String = "postgres") throws -> String {
        try psql(sql, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
