import AnyDefaultsCore
import PostgresNIO

/// The statements of the store, each one round trip. A write is one statement (data-modifying
/// common table expressions), so it is its own transaction: it bumps the namespace's revision
/// (taking the row's lock, which orders the namespace's writers), upserts the values with that
/// revision and, if anything changed, logs the IDs of the keys it changed under that revision
/// (``PostgreSQLSchema``) and queues the notification that is sent when it commits.
/// The write, the one statement on the path of every `setValue` and `apply`, is prepared.
///
/// Keys go to the server as their UTF-8; ``PostgreSQLSchema/keyID(_:)`` makes the ID of each
/// there, once per key and statement, and rows come back with their key's UTF-8 (`full_key`, or
/// the ID when it is the key itself).
enum PostgreSQLStatements {
    /// What a write committed: its revision, and whether any stored value changed.
    struct Commit: Sendable {
        var revision: Int64
        var changed: Bool
        /// For ``removeAll(namespace:channel:)``: the keys it removed.
        var removedKeys: [[UInt8]]?
        /// For ``writeIfUnchanged(namespace:channel:changes:expectedKeys:expectedBytes:)``: whether
        /// its condition held, so that it wrote.
        var conditionHeld = true
    }

    /// A row of a catch-up: a key, its value (`nil` for a removal marker) and the revision that
    /// wrote it; or, for a namespace without rows, nothing.
    struct Row: Sendable {
        var key: [UInt8]
        var value: [UInt8]?
        var revision: Int64
    }

    /// What a catch-up read: the namespace's revision and floor at that moment, and the rows after
    /// the revision it started from.
    struct Delta: Sendable {
        var revision: Int64
        var floor: Int64
        var rows: [Row]
    }

    /// Notifies the channel in parameter `channel`, with the payload: the revision, a space, the
    /// namespace (at most 1000 bytes, far under PostgreSQL's 8000-byte limit on payloads).
    private static func notify(_ channel: String) -> String {
        "pg_notify(\(channel), ns.revision::text || ' ' || $1)"
    }

    private static func id(_ key: String) -> String { PostgreSQLSchema.keyID(key) }

    /// Logs the IDs in the column `key` of the rows the common table expression `rows` returned
    /// under the revision of `ns`, if there are any (the expression `changed` tells whether).
    private static func log(_ rows: String) -> String {
        """
        changed AS (SELECT array_agg(key) AS keys FROM \(rows)),
        logged AS (
            INSERT INTO anydefaults_changes (ns, revision, keys)
            SELECT ns.id, ns.revision, changed.keys FROM ns, changed WHERE changed.keys IS NOT NULL)
        """
    }

    private static let bumpRevision = """
        ns AS (
            INSERT INTO anydefaults_namespaces AS n (namespace, revision) VALUES ($1, 1)
            ON CONFLICT (namespace) DO UPDATE SET revision = n.revision + 1
            RETURNING n.id, n.revision)
        """

    /// The number of namespace `$1` (``PostgreSQLSchema``), for statements that do not bump its
    /// revision; `NULL` (matching no row) while it has none.
    private static let namespaceID = "(SELECT id FROM anydefaults_namespaces WHERE namespace = $1)"

    /// The write: upserts the changes (each key once) given as two arrays, keys (`$2`) and values
    /// (`$4`); a removal is stored as a removal marker, so that other clients learn of it by
    /// revision. A value equal to the stored bytes is left alone.
    ///
    /// Prepared once per connection (``PostgreSQLSession``): parsing and planning this statement
    /// costs the server about as much as executing it for one key, so an unprepared write took
    /// measurably longer than a raw upsert (Docs/Performance.md, "PostgreSQL").
    static let writeSQL = """
        WITH \(bumpRevision),
        up AS (
            INSERT INTO anydefaults_values AS v (ns, key, full_key, value, revision)
            SELECT ns.id, \(id("c.key")), CASE WHEN length(c.key) > \(PostgreSQLSchema.inlineKeyLimit) THEN c.key END,
                NULLIF(c.value, ''::bytea), ns.revision
            FROM ns, unnest($2::bytea[], $4::bytea[]) AS c(key, value)
            ON CONFLICT (ns, key) DO UPDATE SET value = EXCLUDED.value, revision = EXCLUDED.revision
                WHERE v.value IS DISTINCT FROM EXCLUDED.value
            RETURNING v.key),
        \(log("up"))
        SELECT ns.revision, changed.keys IS NOT NULL, CASE WHEN changed.keys IS NOT NULL THEN \(notify("$3")) END FROM ns, changed
        """

    /// The parameters of ``writeSQL`` for `changes`, in the binary format the prepared statement
    /// takes (`text`, `bytea[]`, `text`, `bytea[]`).
    ///
    /// Each array is written straight into one buffer, every value encoded into one scratch
    /// array: an array of a buffer per element, then encoded, cost a batch of 1000 keys two
    /// allocations and a copy per key.
    ///
    /// - Throws: `invalidValue` for a value whose encoding is over 1 GiB, the most a PostgreSQL
    ///   field holds (a length the array format's 32 bits could not even carry beyond 2 GiB).
    static func writeBinds(namespace: String, channel: String, changes: [DefaultsChange]) throws(DefaultsError) -> [PostgresData] {
        var keys = ByteBufferAllocator().buffer(capacity: 20 + changes.count * 24)
        var values = ByteBufferAllocator().buffer(capacity: 20 + changes.count * 12)
        writeArrayHeader(count: changes.count, into: &keys)
        writeArrayHeader(count: changes.count, into: &values)
        var scratch: [UInt8] = []
        scratch.reserveCapacity(64)
        for change in changes {
            keys.writeInteger(Int32(change.key.utf8.count))
            keys.writeString(change.key)
            // The empty bytea marks a removal: every encoded value has at least its tag byte.
            scratch.removeAll(keepingCapacity: true)
            if let value = change.value { BinaryValueCodec.append(value, to: &scratch) }
            guard scratch.count <= largestField else {
                throw .postgres(
                    .invalidValue, "The value is \(scratch.count) bytes encoded; PostgreSQL holds at most 1 GiB in a field. Nothing was written.",
                    key: change.key)
            }
            values.writeInteger(Int32(scratch.count))
            values.writeBytes(scratch)
        }
        return [
            PostgresData(type: .text, value: ByteBuffer(string: namespace)),
            PostgresData(type: .byteaArray, value: keys),
            PostgresData(type: .text, value: ByteBuffer(string: channel)),
            PostgresData(type: .byteaArray, value: values),
        ]
    }

    /// The most bytes a PostgreSQL field holds (1 GiB).
    private static let largestField = 1 << 30

    /// The header of a one-dimensional `bytea[]` of `count` elements, none NULL, in PostgreSQL's
    /// binary array format (`array_recv`): dimensions, a NULL flag, the element type, then the
    /// length and lower bound of the dimension. An empty array has no dimension.
    private static func writeArrayHeader(count: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(Int32(count == 0 ? 0 : 1))
        buffer.writeInteger(Int32(0))
        buffer.writeInteger(PostgresDataType.bytea.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(count))
        buffer.writeInteger(Int32(1))
    }

    /// Marks every stored key of the namespace removed, and returns the keys.
    static func removeAll(namespace: String, channel: String) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 2)
        binds.append(namespace)
        binds.append(channel)
        return removal(matching: "", binds: binds)
    }

    /// Marks `key` removed if it holds a value, and returns it among the removed keys if it did:
    /// the atomic remove-and-report of ``PostgreSQLProvider/removeValueIfPresent(forKey:)``.
    static func remove(namespace: String, channel: String, key: String) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 3)
        binds.append(namespace)
        binds.append(channel)
        binds.append(ByteBuffer(string: key))
        return removal(matching: " AND v.key = \(id("$3::bytea"))", binds: binds)
    }

    /// Marks removed the stored keys of namespace `$1` that `condition` (more of the `WHERE`
    /// clause, over `v`, `ns` and what `sources` adds to the `FROM` clause) selects, in one new revision that is logged and announced on channel `$2`; returns
    /// the revision, whether any key was removed, and the keys.
    private static func removal(joining sources: String = "", matching condition: String, binds: PostgresBindings) -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                WITH \(bumpRevision),
                gone AS (
                    UPDATE anydefaults_values AS v SET value = NULL, revision = ns.revision FROM ns\(sources)
                    WHERE v.ns = ns.id\(condition) AND v.value IS NOT NULL
                    RETURNING v.key, \(PostgreSQLSchema.fullKey("v")) AS full_key),
                \(log("gone")),
                removed AS (SELECT array_agg(full_key) AS keys FROM gone)
                SELECT ns.revision, removed.keys IS NOT NULL, removed.keys, CASE WHEN removed.keys IS NOT NULL THEN \(notify("$2")) END
                FROM ns, removed
                """,
            binds: binds)
    }

    /// The stored bytes of `keys` (those that hold a value), for a compare-and-remove to check.
    static func storedValues(namespace: String, keys: [String]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 2)
        binds.append(namespace)
        binds.append(keys.map { ByteBuffer(string: $0) })
        return PostgresQuery(
            unsafeSQL: """
                SELECT \(PostgreSQLSchema.fullKey("v")), v.value FROM anydefaults_values v, unnest($2::bytea[]) AS e(key)
                WHERE v.ns = \(namespaceID) AND v.key = \(id("e.key")) AND v.value IS NOT NULL
                """,
            binds: binds)
    }

    /// The rows of ``storedValues(namespace:keys:)``: each key and its stored bytes.
    static func storedValues(_ result: PostgresQueryResult) throws -> [(key: String, bytes: [UInt8])] {
        try result.rows.compactMap { row in
            let (key, value) = try row.decode((ByteBuffer, ByteBuffer).self)
            return String(validating: Array(buffer: key), as: UTF8.self).map { ($0, Array(buffer: value)) }
        }
    }

    /// Marks each of `keys` removed if it still holds exactly the bytes given beside it, and
    /// returns those it removed. Each key is compared and removed atomically: in READ COMMITTED an
    /// UPDATE that waited for another writer of a row checks its condition again on the row as
    /// that writer left it.
    static func removeUnchanged(namespace: String, channel: String, keys: [String], values: [[UInt8]]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 4)
        binds.append(namespace)
        binds.append(channel)
        binds.append(keys.map { ByteBuffer(string: $0) })
        binds.append(values.map { ByteBuffer(bytes: $0) })
        return removal(
            joining: ", unnest($3::bytea[], $4::bytea[]) AS e(key, value)",
            matching: " AND v.key = \(id("e.key")) AND v.value = e.value", binds: binds)
    }

    /// The write of ``writeSQL``, done only if each of `expectedKeys` holds exactly the bytes
    /// beside it (empty: no value) and no other write of the namespace came between this
    /// statement's snapshot and its turn: in READ COMMITTED every part of a statement reads the
    /// snapshot taken when it started, before it waited for the namespace's row (which orders its
    /// writers), so the condition read there is current only if the revision it then takes is the
    /// one after the revision in that snapshot. Otherwise nothing is written (the revision is
    /// still taken, as by a write that changes nothing) and the caller starts again.
    static func writeIfUnchanged(
        namespace: String, channel: String, changes: [DefaultsChange], expectedKeys: [String], expectedBytes: [[UInt8]]
    ) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 6)
        binds.append(namespace)
        binds.append(changes.map { ByteBuffer(string: $0.key) })
        binds.append(channel)
        binds.append(changes.map { change in change.value.map { ByteBuffer(bytes: BinaryValueCodec.encode($0)) } ?? ByteBuffer() })
        binds.append(expectedKeys.map { ByteBuffer(string: $0) })
        binds.append(expectedBytes.map { ByteBuffer(bytes: $0) })
        return PostgresQuery(
            unsafeSQL: """
                WITH seen AS (
                    SELECT coalesce((SELECT revision FROM anydefaults_namespaces WHERE namespace = $1), 0) AS revision),
                held AS (
                    SELECT coalesce(bool_and(v.value IS NOT DISTINCT FROM NULLIF(e.value, ''::bytea)), true) AS matched
                    FROM unnest($5::bytea[], $6::bytea[]) AS e(key, value)
                    LEFT JOIN anydefaults_values v ON v.ns = \(namespaceID) AND v.key = \(id("e.key"))),
                \(bumpRevision),
                go AS (SELECT ns.revision = seen.revision + 1 AND held.matched AS ok FROM ns, seen, held),
                up AS (
                    INSERT INTO anydefaults_values AS v (ns, key, full_key, value, revision)
                    SELECT ns.id, \(id("c.key")), CASE WHEN length(c.key) > \(PostgreSQLSchema.inlineKeyLimit) THEN c.key END,
                        NULLIF(c.value, ''::bytea), ns.revision
                    FROM ns, go, unnest($2::bytea[], $4::bytea[]) AS c(key, value)
                    WHERE go.ok
                    ON CONFLICT (ns, key) DO UPDATE SET value = EXCLUDED.value, revision = EXCLUDED.revision
                        WHERE v.value IS DISTINCT FROM EXCLUDED.value
                    RETURNING v.key),
                \(log("up"))
                SELECT ns.revision, changed.keys IS NOT NULL, go.ok, CASE WHEN changed.keys IS NOT NULL THEN \(notify("$3")) END
                FROM ns, changed, go
                """,
            binds: binds)
    }

    /// Decodes the row ``writeIfUnchanged(namespace:channel:changes:expectedKeys:expectedBytes:)``
    /// returns.
    static func conditionalCommit(_ rows: [PostgresRow]) throws -> Commit {
        guard let row = rows.first else {
            throw DefaultsError.postgres(.internalError, "The server returned no revision for a write.")
        }
        let (revision, changed, held, _) = try row.decode((Int64, Bool, Bool, String?).self)
        return Commit(revision: revision, changed: changed, conditionHeld: held)
    }

    /// Decodes the row ``writeSQL`` returns: the revision and whether anything changed.
    ///
    /// The cells are read as binary whatever format the row reports: postgres-nio's
    /// `PreparedQuery` asks the server for binary results but describes the columns with the
    /// text format of the statement's description.
    static func writeCommit(_ rows: [PostgresRow]) throws -> Commit {
        guard let row = rows.first else {
            throw DefaultsError.postgres(.internalError, "The server returned no revision for a write.")
        }
        let cells = row.makeRandomAccess()
        guard cells.count == 3, var revision = cells[0].bytes, var changed = cells[1].bytes else {
            throw DefaultsError.postgres(.internalError, "The server's answer to a write has an unexpected shape.")
        }
        return Commit(
            revision: try Int64(from: &revision, type: .int8, format: .binary, context: .default),
            changed: try Bool(from: &changed, type: .bool, format: .binary, context: .default))
    }

    /// Decodes the row a remove or removeAll returns.
    static func commit(_ rows: [PostgresRow]) throws -> Commit {
        guard let row = rows.first else {
            throw DefaultsError.postgres(.internalError, "The server returned no revision for a write.")
        }
        let (revision, changed, keys, _) = try row.decode((Int64, Bool, [ByteBuffer]?, String?).self)
        return Commit(revision: revision, changed: changed, removedKeys: (keys ?? []).map { Array(buffer: $0) })
    }

    /// The rows written after `revision` (removal markers included), or with `full`, every stored
    /// value; with the namespace's revision and floor, all from one snapshot. The rows written
    /// after a revision are those of the keys the change log lists after it (the log reaches back
    /// to the floor: a caller behind it reloads whole), each looked up by its ID.
    static func catchUp(namespace: String, after revision: Int64, full: Bool) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 2)
        binds.append(namespace)
        if !full { binds.append(revision) }
        let rows = full
            ? "SELECT * FROM anydefaults_values v WHERE v.ns = n.id AND v.value IS NOT NULL"
            : """
            SELECT v.* FROM (
                SELECT DISTINCT k.key FROM anydefaults_changes c, unnest(c.keys) AS k(key) WHERE c.ns = n.id AND c.revision > $2
            ) AS ids JOIN anydefaults_values v ON v.ns = n.id AND v.key = ids.key AND v.revision > $2
            """
        return PostgresQuery(
            unsafeSQL: """
                SELECT n.revision, n.floor, \(PostgreSQLSchema.fullKey("v")), v.value, v.revision
                FROM anydefaults_namespaces n LEFT JOIN LATERAL (\(rows)) AS v ON true
                WHERE n.namespace = $1
                ORDER BY v.revision, v.key
                """,
            binds: binds)
    }

    static func delta(_ result: PostgresQueryResult) throws -> Delta {
        var delta = Delta(revision: 0, floor: 0, rows: [])
        delta.rows.reserveCapacity(result.rows.count)
        for row in result.rows {
            let (revision, floor, key, value, rowRevision) = try row.decode((Int64, Int64, ByteBuffer?, ByteBuffer?, Int64?).self)
            delta.revision = revision
            delta.floor = floor
            if let key, let rowRevision {
                delta.rows.append(Row(key: Array(buffer: key), value: value.map { Array(buffer: $0) }, revision: rowRevision))
            }
        }
        return delta
    }

    /// The revisions of `namespaces` (those with none written yet are absent).
    static func revisions(of namespaces: [String]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 1)
        binds.append(namespaces)
        return PostgresQuery(
            unsafeSQL: "SELECT namespace, revision FROM anydefaults_namespaces WHERE namespace = ANY($1::text[])", binds: binds)
    }

    static func revisions(_ result: PostgresQueryResult) throws -> [String: Int64] {
        var revisions: [String: Int64] = [:]
        for row in result.rows {
            let (namespace, revision) = try row.decode((String, Int64).self)
            revisions[namespace] = revision
        }
        return revisions
    }

    /// Removes the change log's entries and the removal markers of revisions up to `revision`,
    /// and raises the floor to the newest one removed, so that a client that knew less reloads
    /// the namespace whole.
    static func prune(namespace: String, through revision: Int64) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 2)
        binds.append(namespace)
        binds.append(revision)
        return PostgresQuery(
            unsafeSQL: """
                WITH logged AS (
                    DELETE FROM anydefaults_changes WHERE ns = \(namespaceID) AND revision <= $2 RETURNING revision),
                markers AS (
                    DELETE FROM anydefaults_values WHERE ns = \(namespaceID) AND value IS NULL AND revision <= $2 RETURNING revision),
                pruned AS (SELECT revision FROM logged UNION ALL SELECT revision FROM markers)
                UPDATE anydefaults_namespaces SET floor = GREATEST(floor, (SELECT max(revision) FROM pruned))
                WHERE namespace = $1 AND EXISTS (SELECT 1 FROM pruned)
                """,
            binds: binds)
    }
}
