// SQLiteProvider beside the least a C program must do for the same work on the same table:
// a point read with a prepared statement, and one autocommit upsert at the same synchronous setting.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target SQLiteBenchmarks
import AnyDefaultsCore
import AnyDefaultsSQLite
import Benchmark
import CSQLite
import Foundation
import Synchronization

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput], timeUnits: .nanoseconds, maxDuration: .seconds(2))
    // Made when the benchmarks run (not when the tool only lists them), and removed afterwards.
    let slot = FixtureSlot()
    Benchmark.setup = { try slot.create() }
    Benchmark.teardown = { slot.remove() }

    // MARK: Point read of an int (uncached)

    Benchmark("Read: raw C prepared statement", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let raw = try slot.fixtures().rawRead
        for _ in benchmark.scaledIterations {
            blackHole(raw.read(key: Fixtures.rawReadKey))
        }
    }
    Benchmark("Read: SQLiteProvider.value(forKey:)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let provider = try slot.fixtures().providerRead
        for _ in benchmark.scaledIterations {
            blackHole(try provider.value(forKey: Fixtures.readKey))
        }
    }

    // MARK: One durable write of a new value (SQLite skips writing a page whose bytes do not
    // change, and the provider skips equal values when observed, so every write stores a new one)

    for durability in [SQLiteProvider.Durability.normal, .full] {
        let name = durability == .normal ? "NORMAL" : "FULL"
        Benchmark("Write \(name): raw C autocommit upsert") { benchmark in
            let fixtures = try slot.fixtures()
            let raw = fixtures.rawWrite[durability]
            for _ in benchmark.scaledIterations {
                raw?.upsert(key: "k", value: fixtures.nextValue())
            }
        }
        Benchmark("Write \(name): SQLiteProvider.setValue") { benchmark in
            let fixtures = try slot.fixtures()
            let provider = fixtures.providerWrite[durability]
            for _ in benchmark.scaledIterations {
                try provider?.setValue(.int(fixtures.nextValue()), forKey: "k")
            }
        }
        // While another process watches the store, each write also logs the key it changed, for
        // that process (schema version 2's change log).
        Benchmark("Write \(name): SQLiteProvider.setValue, another process watching") { benchmark in
            let fixtures = try slot.fixtures()
            let provider = fixtures.watchedWrite[durability]
            for _ in benchmark.scaledIterations {
                try provider?.setValue(.int(fixtures.nextValue()), forKey: "k")
            }
        }
        // With an observer the provider also reads the old value in the transaction, to report
        // only real changes.
        Benchmark("Write \(name): SQLiteProvider.setValue, observed") { benchmark in
            let fixtures = try slot.fixtures()
            let observed = fixtures.observedWrite[durability]
            for _ in benchmark.scaledIterations {
                try observed?.setValue(.int(fixtures.nextValue()), forKey: "k")
            }
        }
    }

    // MARK: Writes, paired
    // On a shared machine the load swings between benchmarks run one after the other. Here each
    // provider write and a raw upsert run back to back, alternating which goes first, and each
    // pair records its time ratio ×1000; the ratio table reads the median ("paired" goals).

    let pairedRatio = BenchmarkMetric.custom("paired ratio ×1000", polarity: .prefersSmaller, useScalingFactor: false)
    let subjects: [(String, @Sendable (Fixtures) -> SQLiteProvider?)] = [
        ("SQLiteProvider", { $0.providerWrite[.normal] }),
        ("SQLiteProvider observed", { $0.observedWrite[.normal] }),
        ("SQLiteProvider, another process watching", { $0.watchedWrite[.normal] }),
    ]
    for (name, subject) in subjects {
        Benchmark("Write NORMAL: \(name) vs raw C, paired", configuration: .init(metrics: [.throughput, pairedRatio])) {
            benchmark in
            let fixtures = try slot.fixtures()
            let raw = fixtures.rawWrite[.normal]
            let provider = subject(fixtures)
            for _ in benchmark.scaledIterations {
                let rawSide = {
                    let start = ContinuousClock.now
                    raw?.upsert(key: "k", value: fixtures.nextValue())
                    return ContinuousClock.now - start
                }
                let providerSide = {
                    let start = ContinuousClock.now
                    try provider?.setValue(.int(fixtures.nextValue()), forKey: "k")
                    return ContinuousClock.now - start
                }
                let ratio = try pairedRatioPerMille(subjectFirst: fixtures.nextValue().isMultiple(of: 2), rawSide, providerSide)
                benchmark.measurement(pairedRatio, ratio)
            }
        }
    }
}

/// Runs both sides of a pair, in the order given, and returns the subject's time over the raw
/// side's, ×1000.
func pairedRatioPerMille(subjectFirst: Bool, _ raw: () -> Duration, _ subject: () throws -> Duration) rethrows -> Int {
    var subjectTime = Duration.zero
    if subjectFirst { subjectTime = try subject() }
    let rawTime = raw()
    if !subjectFirst { subjectTime = try subject() }
    return Int((subjectTime / rawTime * 1000).rounded())
}

/// Holds the fixtures from setup to teardown.
final class FixtureSlot: Sendable {
    private let current = Mutex<Fixtures?>(nil)

    struct Missing: Error {}

    func create() throws {
        let fixtures = try Fixtures()
        current.withLock { $0 = fixtures }
    }

    func fixtures() throws -> Fixtures {
        guard let fixtures = current.withLock({ $0 }) else { throw Missing() }
        return fixtures
    }

    func remove() {
        current.withLock { fixtures in
            fixtures?.remove()
            fixtures = nil
        }
    }
}

/// The stores the benchmarks use, in a temporary directory: a provider and a raw connection per
/// case, each on its own file created by SQLiteProvider, so the tables have the same shape.
final class Fixtures: Sendable {
    static let readKey = "settings.key.42"
    static let rawReadKey: StaticString = "settings.key.42"

    let directory: URL
    let providerRead: SQLiteProvider
    let rawRead: RawSQLite
    let providerWrite: [SQLiteProvider.Durability: SQLiteProvider]
    let observedWrite: [SQLiteProvider.Durability: SQLiteProvider]
    let watchedWrite: [SQLiteProvider.Durability: SQLiteProvider]
    let rawWrite: [SQLiteProvider.Durability: RawSQLite]
    private let observations: [DefaultsObservation]
    private let counter = Atomic<Int64>(0)

    init() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anydefaults-sqlite-benchmarks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        let seed: [DefaultsChange] = (0..<100).map { .set("settings.key.\($0)", .int(Int64($0))) }

        // Seeded, closed (which checkpoints the log) and reopened, so every file starts alike.
        func store(_ name: String, _ durability: SQLiteProvider.Durability) throws -> SQLiteProvider {
            let path = directory.appendingPathComponent(name).path
            let seeding = try SQLiteProvider(path: path, durability: durability)
            try seeding.apply(seed)
            seeding.close()
            return try SQLiteProvider(path: path, durability: durability)
        }
        func raw(_ name: String, _ durability: SQLiteProvider.Durability) throws -> RawSQLite {
            _ = try store(name, durability)
            return try RawSQLite(path: directory.appendingPathComponent(name).path, full: durability == .full)
        }
        // A write's cost depends on whether the write-ahead log still grows (the file's size
        // changes, so a flush also writes metadata) or is reused after a checkpoint. Start every
        // write benchmark with a log that has wrapped around once, as in a long-running process.
        func warmUp(_ name: String) throws {
            try RawSQLite.fillLog(path: directory.appendingPathComponent(name).path)
        }

        providerRead = try store("read-provider.sqlite", .normal)
        rawRead = try raw("read-raw.sqlite", .normal)
        var providers: [SQLiteProvider.Durability: SQLiteProvider] = [:]
        var observed: [SQLiteProvider.Durability: SQLiteProvider] = [:]
        var watched: [SQLiteProvider.Durability: SQLiteProvider] = [:]
        var raws: [SQLiteProvider.Durability: RawSQLite] = [:]
        var observations: [DefaultsObservation] = []
        for durability in [SQLiteProvider.Durability.normal, .full] {
            providers[durability] = try store("write-provider-\(durability).sqlite", durability)
            let observing = try store("write-observed-\(durability).sqlite", durability)
            observations.append(observing.observe { blackHole($0) })
            observed[durability] = observing
            watched[durability] = try store("write-watched-\(durability).sqlite", durability)
            try RawSQLite.leaseToAnotherProcess(path: directory.appendingPathComponent("write-watched-\(durability).sqlite").path)
            raws[durability] = try raw("write-raw-\(durability).sqlite", durability)
            for kind in ["provider", "observed", "watched", "raw"] { try warmUp("write-\(kind)-\(durability).sqlite") }
        }
        providerWrite = providers
        observedWrite = observed
        watchedWrite = watched
        rawWrite = raws
        self.observations = observations
    }

    /// A value not stored before.
    func nextValue() -> Int64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The raw baseline: one connection opened like SQLiteProvider's (read-write, no SQLite mutex,
/// WAL, the same synchronous setting), with its statements prepared once.
///
/// `@unchecked Sendable` is safe: package-benchmark runs one benchmark at a time, on one thread,
/// so the connection is never used by two threads at once.
final class RawSQLite: @unchecked Sendable {
    private let db: OpaquePointer
    private let select: OpaquePointer
    private let upsert: OpaquePointer

    struct Failure: Error {
        var message: String
    }

    init(path: String, full: Bool) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            throw Failure(message: "open \(path)")
        }
        self.db = db
        sqlite3_busy_timeout(db, 5000)
        guard sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(full ? "FULL" : "NORMAL")", nil, nil, nil) == SQLITE_OK
        else { throw Failure(message: "pragmas") }
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
                let statement
            else { throw Failure(message: String(cString: sqlite3_errmsg(db))) }
            return statement
        }
        select = try prepare("SELECT type, value FROM defaults WHERE key = ?1")
        upsert = try prepare(
            """
            INSERT INTO defaults (key, type, value) VALUES (?1, ?2, ?3)
            ON CONFLICT (key) DO UPDATE SET type = excluded.type, value = excluded.value
            """)
    }

    /// Records a lease on the store's change log for a process that is not this one, as a process
    /// watching the store for changes holds while it runs: writes are logged from then on.
    static func leaseToAnotherProcess(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw Failure(message: "open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        guard sqlite3_exec(db, "INSERT INTO watchers VALUES (42, 4102444800)", nil, nil, nil) == SQLITE_OK else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// Commits more frames than the automatic checkpoint lets the log hold (1000 pages), without
    /// flushing, then checkpoints, so that later commits reuse the log from its start.
    static func fillLog(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw Failure(message: "open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 5000)
        var sql = "PRAGMA synchronous = OFF;"
        for index in 0..<1100 {
            sql += "INSERT INTO defaults VALUES ('warm-up', 'int', \(index)) ON CONFLICT (key) DO UPDATE SET value = excluded.value;"
        }
        sql += "DELETE FROM defaults WHERE key = 'warm-up'; PRAGMA wal_checkpoint(PASSIVE);"
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// Reads the int stored under `key` (checking its type name's first byte, as any reader must
    /// look at the type), or `nil`.
    func read(key: StaticString) -> Int64? {
        sqlite3_bind_text(select, 1, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self), Int32(key.utf8CodeUnitCount), nil)
        defer { sqlite3_reset(select) }
        guard sqlite3_step(select) == SQLITE_ROW, let type = sqlite3_column_text(select, 0), type[0] == UInt8(ascii: "i")
        else { return nil }
        return sqlite3_column_int64(select, 1)
    }

    /// Stores the int `value` under `key` in one autocommit statement.
    func upsert(key: StaticString, value: Int64) {
        let int: StaticString = "int"
        sqlite3_bind_text(upsert, 1, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self), Int32(key.utf8CodeUnitCount), nil)
        sqlite3_bind_text(upsert, 2, UnsafeRawPointer(int.utf8Start).assumingMemoryBound(to: CChar.self), 3, nil)
        sqlite3_bind_int64(upsert, 3, value)
        sqlite3_step(upsert)
        sqlite3_reset(upsert)
    }
}
