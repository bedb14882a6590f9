import AnyDefaults
import AnyDefaultsTesting
import Foundation
import Synchronization
import Testing
import TestSupport

/// Schema version 3 (Docs/Backends.md, "PostgreSQL", "Schema"): a store of version 1 or 2 is
/// migrated in place by the first client of version 3 that connects, keeping every value bit for
/// bit, also when several clients connect at once; and a key longer than the inline limit, identified by
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

    /// The tables of version 2, as that version created them.
    private static let version2 = """
        CREATE TABLE anydefaults_schema (version integer NOT NULL);
        CREATE TABLE anydefaults_namespaces (namespace text PRIMARY KEY, revision bigint NOT NULL, floor bigint NOT NULL DEFAULT 0);
        CREATE TABLE anydefaults_values (
            namespace text NOT NULL, key bytea NOT NULL, full_key bytea, value bytea, revision bigint NOT NULL,
            PRIMARY KEY (namespace, key));
        CREATE TABLE anydefaults_changes (namespace text NOT NULL, revision bigint NOT NULL, keys bytea[] NOT NULL, PRIMARY KEY (namespace, revision));
        INSERT INTO anydefaults_schema (version) VALUES (2);
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

    /// Every row of the values as text, in the tables of `version`: the namespace's name, the key's
    /// UTF-8 (`full_key` from version 2 on), the value's bytes and the revision.
    private static func rows(_ cluster: PostgreSQLCluster, _ database: String, version: Int) throws -> [String] {
        let key = version == 1 ? "v.key" : "coalesce(v.full_key, v.key)"
        let (namespace, tables) = version < 3
            ? ("v.namespace", "anydefaults_values v")
            : ("n.namespace", "anydefaults_values v JOIN anydefaults_namespaces n ON n.id = v.ns")
        return try cluster.psql(
            "SELECT \(namespace) || ' ' || encode(\(key), 'hex') || ' ' || coalesce(encode(v.value, 'hex'), 'NULL') || ' ' || v.revision FROM \(tables)",
            database: database
        ).split(separator: "\n").map(String.init).sorted()
    }

    @Test(arguments: [1, 2])
    func anOlderStoreIsMigratedKeepingEveryValueBitForBitWhileClientsOpenAtOnce(from version: Int) throws {
        let cluster = try PostgreSQLCluster.shared()
        let database = try Self.database(cluster)
        try cluster.psql(version == 1 ? Self.version1 : Self.version2, database: database)
        // What the older version wrote: every edge value small enough for a command line, keys at and
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
        // Version 2 identifies a long key by 0xFF and its digest, with its UTF-8 beside.
        let insert = version == 1
            ? "INSERT INTO anydefaults_values (namespace, key, value, revision) VALUES "
            : """
            INSERT INTO anydefaults_values (namespace, key, full_key, value, revision)
            SELECT n, CASE WHEN length(k) <= 1024 THEN k ELSE '\\xff'::bytea || sha256(k) END, CASE WHEN length(k) > 1024 THEN k END, v, r
            FROM (VALUES
            """
        for chunk in stride(from: 0, to: inserts.count, by: 20) {
            try cluster.psql(
                insert + inserts[chunk..<min(chunk + 20, inserts.count)].joined(separator: ",") + (version == 1 ? "" : ") AS t(n, k, v, r)"),
                database: database)
        }
        try cluster.psql("INSERT INTO anydefaults_namespaces (namespace, revision, floor) VALUES ('one', 5, 2), ('two', 1, 0)", database: database)
        if version == 2 {
            try cluster.psql(
                "INSERT INTO anydefaults_changes VALUES ('one', 3, ARRAY['\\x6e756c006b6579'::bytea]), ('one', 4, ARRAY['\\x676f6e65'::bytea]), ('two', 1, ARRAY['\\x6b'::bytea])",
                database: database)
        }
        let before = try Self.rows(cluster, database, version: version)
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

        #expect(try cluster.scalar("SELECT version FROM anydefaults_schema", database: database) == "3")
        #expect(try Self.rows(cluster, database, version: 3) == before, "every row keeps its namespace, key, value and revision")
        // Version 2's change log and floors are kept (version 1 had no log: every floor is raised).
        let log = "SELECT string_agg(n.namespace || ' ' || c.revision || ' ' || cardinality(c.keys) || ' ' || n.floor, ',' ORDER BY n.namespace, c.revision) FROM anydefaults_changes c JOIN anydefaults_namespaces n ON n.id = c.ns"
        #expect(try cluster.scalar(log, database: database) == (version == 1 ? "" : "one 3 1 2,one 4 1 2,two 1 1 0"))
        #expect(try cluster.scalar("SELECT string_agg(namespace || ' ' || floor, ',' ORDER BY namespace) FROM anydefaults_namespaces", database: database)
            == (version == 1 ? "one 5,two 1" : "one 2,two 0"))
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
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_values WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = 'one')", database: database) == "\(values.count + 1)")
        for provider in providers { provider.close() }
    }

    @Test func theSchemaIsCreatedAtVersion3AndANewerOneIsRefused() throws {
        let cluster = try PostgreSQLCluster.shared()
        let database = try Self.database(cluster)
        let provider = try PostgreSQLProvider(url: Self.store(cluster, database, "s"))
        try provider.setValue(.int(1), forKey: "k")
        provider.close()
        #expect(try cluster.scalar("SELECT version FROM anydefaults_schema", database: database) == "3")
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_changes", database: database) == "1")
        try cluster.psql("UPDATE anydefaults_schema SET version = 4", database: database)
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
            "SELECT encode(key, 'hex') FROM anydefaults_values WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = '\(namespace)') AND full_key IS NOT NULL ORDER BY full_key")
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
        #expect(try cluster.scalar("SELECT count(*) FROM anydefaults_values WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = '\(namespace)')") == "\(expected.count)")
        // No short key's row starts with 0xFF; every long key's row is 0xFF and its digest.
        #expect(try cluster.scalar(
            "SELECT count(*) FROM anydefaults_values WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = '\(namespace)') AND (full_key IS NULL) = (get_byte(key, 0) = 255)") == "0")

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
