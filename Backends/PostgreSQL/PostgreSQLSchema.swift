import AnyDefaultsCore
import PostgresNIO

/// The tables of the store, which the provider creates (or migrates) when it connects, and the
/// version recorded with them. Docs/Backends.md ("PostgreSQL", "Schema") describes them.
///
/// - `anydefaults_schema`: one row, the schema version.
/// - `anydefaults_namespaces`: per namespace, its number (`id`, which the other tables use), its
///   revision (bumped by every write, under the row's lock, so that the writers of one namespace
///   commit in revision order) and the floor (the newest revision of the change log or of removal
///   markers that was pruned).
/// - `anydefaults_values`: per namespace number and key, the value (the core's binary encoding, `NULL`
///   for a removed key: a removal marker) and the revision that wrote it (not indexed, so that a
///   write that changes a value is a HOT update). Keys are the UTF-8 of their NFC form (PostgreSQL's
///   `text` cannot hold NUL); the primary key is on that UTF-8 itself when it is at most
///   ``inlineKeyLimit`` bytes, else on `0xFF` and its SHA-256 (``keyID(_:)``), with the UTF-8 in
///   `full_key`: a B-tree entry cannot exceed about 2.7 kB, and keys can be longer.
/// - `anydefaults_changes`: per namespace and commit that changed something, the IDs of the keys
///   it changed: what a catch-up reads to find the rows written after a revision.
///
/// Version 1 had no change log: the values' primary key was on a generated `sha256(key)` column,
/// and an index on `(namespace, revision)` found the rows written after a revision. Every write
/// changed that indexed column and computed the digest twice per row, which made a 1000-key batch
/// cost the server about three times a plain upsert (Docs/Performance.md, "PostgreSQL").
/// Version 2 kept the namespace's name in every row of the values and the log, and in their
/// primary keys: with a name of 40 bytes (an application's, a tenant's), every row and index
/// entry carried it, and a 1000-key batch cost the server about 15% more than with a number.
enum PostgreSQLSchema {
    /// The version this library writes and reads.
    static let version: Int32 = 3

    /// Keys whose UTF-8 is at most this many bytes are their own ID; longer ones are identified by
    /// their digest. An index entry (the namespace's number and the ID) stays far under the
    /// B-tree's limit of about 2.7 kB.
    static let inlineKeyLimit = 1024

    /// The SQL expression of the ID of the key whose UTF-8 is the `bytea` expression `key`: the
    /// bytes themselves up to ``inlineKeyLimit``, else `0xFF` followed by their SHA-256. No UTF-8
    /// contains the byte `0xFF`, so the ID of a long key is never the ID of a short one. Every
    /// statement and the migration compute IDs with this one expression.
    static func keyID(_ key: String) -> String {
        "(CASE WHEN length(\(key)) <= \(inlineKeyLimit) THEN \(key) ELSE '\\xff'::bytea || sha256(\(key)) END)"
    }

    /// The SQL expression of a key's UTF-8 from a row of `anydefaults_values` named `row`.
    static func fullKey(_ row: String) -> String {
        "coalesce(\(row).full_key, \(row).key)"
    }

    /// An advisory-lock key ("ADef"), held while the tables are created or migrated so that
    /// processes connecting at once do not race.
    static let lockKey: Int64 = 0x4144_6566

    static let create: [String] = [
        "CREATE TABLE IF NOT EXISTS anydefaults_schema (version integer NOT NULL)",
        // `id` is a bigint: every write's upsert of its namespace's row draws a number from the
        // sequence, even when the row exists.
        """
        CREATE TABLE IF NOT EXISTS anydefaults_namespaces (
            id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            namespace text PRIMARY KEY,
            revision bigint NOT NULL,
            floor bigint NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE IF NOT EXISTS anydefaults_values (
            ns bigint NOT NULL,
            key bytea NOT NULL,
            full_key bytea,
            value bytea,
            revision bigint NOT NULL,
            PRIMARY KEY (ns, key))
        """,
        """
        CREATE TABLE IF NOT EXISTS anydefaults_changes (
            ns bigint NOT NULL,
            revision bigint NOT NULL,
            keys bytea[] NOT NULL,
            PRIMARY KEY (ns, revision))
        """,
        "INSERT INTO anydefaults_schema (version) SELECT \(version) WHERE NOT EXISTS (SELECT 1 FROM anydefaults_schema)",
    ]

    /// From version 1 to version 2, in place (so that a client of version 1 still connected fails
    /// its next write on the missing `digest` column rather than writing to a table nobody reads):
    /// long keys get their ID and keep their UTF-8 in `full_key`; the digest column (and the
    /// primary key on it) and the revision index go; the change log starts empty, so every floor
    /// moves up to its namespace's revision (a catch-up from before it reloads the namespace
    /// whole). ``migrateFrom2`` follows.
    static let migrateFrom1: [String] = [
        "DROP INDEX IF EXISTS anydefaults_values_by_revision",
        "ALTER TABLE anydefaults_values DROP COLUMN digest",   // and the primary key on it
        "ALTER TABLE anydefaults_values ADD COLUMN full_key bytea",
        "UPDATE anydefaults_values SET full_key = key, key = \(keyID("key")) WHERE length(key) > \(inlineKeyLimit)",
        "ALTER TABLE anydefaults_values ADD PRIMARY KEY (namespace, key)",
        """
        CREATE TABLE IF NOT EXISTS anydefaults_changes (
            namespace text NOT NULL,
            revision bigint NOT NULL,
            keys bytea[] NOT NULL,
            PRIMARY KEY (namespace, revision))
        """,
        "UPDATE anydefaults_namespaces SET floor = revision",
        "UPDATE anydefaults_schema SET version = 2",
    ]

    /// From version 2 to version 3, in place (a client of version 2 still connected fails its next
    /// statement on the missing `namespace` column): every namespace gets its number, and the
    /// values and the change log name it by that number, keeping every row, revision and floor.
    static let migrateFrom2: [String] = [
        "ALTER TABLE anydefaults_namespaces ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY UNIQUE",
        // Every write made its namespace's row first; a row missing all the same is made here,
        // at the newest revision either table holds.
        """
        INSERT INTO anydefaults_namespaces (namespace, revision)
        SELECT namespace, max(revision) FROM (
            SELECT namespace, revision FROM anydefaults_values UNION ALL SELECT namespace, revision FROM anydefaults_changes) AS t
        GROUP BY namespace ON CONFLICT (namespace) DO NOTHING
        """,
    ] + [("anydefaults_values", "key"), ("anydefaults_changes", "revision")].flatMap { table, column in
        [
            "ALTER TABLE \(table) ADD COLUMN ns bigint",
            "UPDATE \(table) t SET ns = n.id FROM anydefaults_namespaces n WHERE n.namespace = t.namespace",
            "ALTER TABLE \(table) DROP COLUMN namespace",   // and the primary key on it
            // A row left without a number (none can be) fails the migration, which then changes nothing.
            "ALTER TABLE \(table) ALTER COLUMN ns SET NOT NULL",
            "ALTER TABLE \(table) ADD PRIMARY KEY (ns, \(column))",
        ]
    } + [
        "UPDATE anydefaults_schema SET version = 3",
    ]

    /// Makes sure the tables exist at this library's version: creates them if the schema table
    /// is missing, migrates an older version, refuses a newer one. Creating and migrating happen
    /// in one transaction under the advisory lock, which reads the version again first: of
    /// several clients connecting at once, one does the work and the others find it done.
    static func ensure(on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<Void> {
        readVersion(connection, logger).flatMap { version -> EventLoopFuture<Void> in
            if let version, version == Self.version { return connection.eventLoop.makeSucceededVoidFuture() }
            if let version, version > Self.version { return refuse(version, connection) }
            return upgrade(on: connection, logger: logger).flatMap { readVersion(connection, logger) }.flatMap { version in
                guard let version, version == Self.version else { return refuse(version ?? 0, connection) }
                return connection.eventLoop.makeSucceededVoidFuture()
            }
        }
    }

    /// The recorded version (0 if the table has no row), or `nil` if there is no schema table.
    private static func readVersion(_ connection: PostgresConnection, _ logger: Logger) -> EventLoopFuture<Int32?> {
        connection.query("SELECT max(version) FROM anydefaults_schema", logger: logger)
            .flatMapThrowing { result -> Int32? in
                try result.rows.first?.decode(Int32?.self) ?? 0
            }
            .flatMapErrorThrowing { error -> Int32? in
                if PostgreSQLFailure(error).sqlState == "42P01" { return nil }   // undefined_table
                throw DefaultsError.postgres(error, while: "Reading the schema version")
            }
    }

    private static func refuse(_ version: Int32, _ connection: PostgresConnection) -> EventLoopFuture<Void> {
        connection.eventLoop.makeFailedFuture(
            DefaultsError.postgres(
                .incompatibleFormat,
                "The database holds AnyDefaults schema version \(version); this library reads version \(Self.version)."))
    }

    /// Creates the tables or migrates them to this version, in one transaction under the advisory
    /// lock, after reading the version again there (another client may have done it meanwhile).
    private static func upgrade(on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<Void> {
        @Sendable func run(_ statements: [String]) -> EventLoopFuture<Void> {
            var future = connection.eventLoop.makeSucceededVoidFuture()
            for statement in statements {
                future = future.flatMap { connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).map { _ in } }
            }
            return future
        }
        // The schema table is made first: reading a missing table would abort the transaction.
        return run(["BEGIN", "SELECT pg_advisory_xact_lock(\(lockKey))", create[0]])
            .flatMap { readVersion(connection, logger) }
            .flatMap { version -> EventLoopFuture<Void> in
                switch version {
                case nil, 0: return run(Array(create.dropFirst()))
                case 1: return run(migrateFrom1 + migrateFrom2)
                case 2: return run(migrateFrom2)
                default: return connection.eventLoop.makeSucceededVoidFuture()   // done meanwhile, or newer: refused after
                }
            }
            .flatMap { run(["COMMIT"]) }
            .flatMapError { error in
                // Leave the connection usable (its owner replaces it anyway on failure).
                connection.query("ROLLBACK", logger: logger).map { _ in }.recover { _ in }.flatMapThrowing {
                    throw DefaultsError.postgres(error, while: "Creating or migrating the AnyDefaults tables")
                }
            }
    }
}
