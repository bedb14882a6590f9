import AnyDefaultsCore
import PostgresNIO

/// The tables of the store, which the provider creates (or migrates) when it connects, and the
/// version recorded with them. Docs/Backends.md ("PostgreSQL", "Schema") describes them.
///
/// - `anydefaults_schema`: one row, the schema version.
/// - `anydefaults_namespaces`: per namespace, its revision (bumped by every write, under the
///   row's lock, so that the writers of one namespace commit in revision order) and the floor
///   (the newest revision whose removal markers were pruned).
/// - `anydefaults_values`: per namespace and key, the value (the core's binary encoding, `NULL`
///   for a removed key: a removal marker) and the revision that wrote it. Keys are the UTF-8 of
///   their NFC form in a `bytea` (PostgreSQL's `text` cannot hold NUL); the primary key is on
///   their SHA-256, because a B-tree entry cannot exceed about 2.7 kB and keys can be longer.
enum PostgreSQLSchema {
    /// The version this library writes and reads.
    static let version: Int32 = 1

    /// An advisory-lock key ("ADef"), held while the tables are created so that processes
    /// connecting at once do not race.
    static let lockKey: Int64 = 0x4144_6566

    static let create: [String] = [
        "CREATE TABLE IF NOT EXISTS anydefaults_schema (version integer NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS anydefaults_namespaces (
            namespace text PRIMARY KEY,
            revision bigint NOT NULL,
            floor bigint NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE IF NOT EXISTS anydefaults_values (
            namespace text NOT NULL,
            key bytea NOT NULL,
            digest bytea GENERATED ALWAYS AS (sha256(key)) STORED,
            value bytea,
            revision bigint NOT NULL,
            PRIMARY KEY (namespace, digest))
        """,
        "CREATE INDEX IF NOT EXISTS anydefaults_values_by_revision ON anydefaults_values (namespace, revision)",
        "INSERT INTO anydefaults_schema (version) SELECT \(version) WHERE NOT EXISTS (SELECT 1 FROM anydefaults_schema)",
    ]

    /// Makes sure the tables exist at a version this library reads: creates them if the schema
    /// table is missing (under the advisory lock, in one transaction), refuses a newer version.
    static func ensure(on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<Void> {
        readVersion(connection, logger).flatMap { version -> EventLoopFuture<Void> in
            if let version { return check(version, connection) }
            return create(on: connection, logger: logger).flatMap { readVersion(connection, logger) }.flatMap { version in
                check(version ?? 0, connection)
            }
        }
    }

    /// The recorded version, or `nil` if there is no schema table.
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

    private static func check(_ version: Int32, _ connection: PostgresConnection) -> EventLoopFuture<Void> {
        guard version <= Self.version else {
            return connection.eventLoop.makeFailedFuture(
                DefaultsError.postgres(
                    .incompatibleFormat,
                    "The database holds AnyDefaults schema version \(version); this library reads version \(Self.version) and older."))
        }
        // Version 1 is the first: nothing to migrate yet. A later version migrates here, in one
        // transaction, under the advisory lock.
        return connection.eventLoop.makeSucceededVoidFuture()
    }

    private static func create(on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<Void> {
        let statements = ["BEGIN", "SELECT pg_advisory_xact_lock(\(lockKey))"] + create + ["COMMIT"]
        var future = connection.eventLoop.makeSucceededVoidFuture()
        for statement in statements {
            future = future.flatMap { connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).map { _ in } }
        }
        return future.flatMapError { error in
            // Leave the connection usable (its owner replaces it anyway on failure).
            connection.query("ROLLBACK", logger: logger).map { _ in }.recover { _ in }.flatMapThrowing {
                throw DefaultsError.postgres(error, while: "Creating the AnyDefaults tables")
            }
        }
    }
}
