// PostgreSQLProvider beside raw postgres-nio on the same server, in one run: a point read (served
// from the replica) and a cached read against the same reads of an in-memory store; one write
// against a raw autocommit upsert (its own transaction); a 1000-key batch against a raw
// single-statement upsert of the 1000 keys (one transaction).
// Run: scripts/postgres-benchmarks (it starts a throwaway cluster and sets ANYDEFAULTS_BENCH_POSTGRES,
// the socket store string both sides use).
import AnyDefaultsCore
import AnyDefaultsMemory
import AnyDefaultsPostgreSQL
import Benchmark
import BenchmarkSupport
import Foundation
import PostgresNIO
import Synchronization

/// The stores and the raw connection, made when a benchmark runs.
final class Fixtures: Sendable {
    let provider: PostgreSQLProvider
    let cached: CachingProvider<PostgreSQLProvider>
    let memoryCached: CachingProvider<MemoryProvider>
    let memory: MemoryProvider
    let raw: PostgresConnection
    private let counter = Mutex<Int64>(0)
    static let batchKeys = (0..<1000).map { "batch.\($0)" }

    init() throws {
        guard let store = ProcessInfo.processInfo.environment["ANYDEFAULTS_BENCH_POSTGRES"] else {
            throw BenchmarkFailure(description: "Set ANYDEFAULTS_BENCH_POSTGRES to a postgres: store string (scripts/postgres-benchmarks does).")
        }
        var options = try PostgreSQLProvider.Options(StoreConfiguration(parsing: store))
        options.namespace = "bench-\(UUID().uuidString)"
        provider = try PostgreSQLProvider(options: options)
        // Another connection and another namespace: had it shared the written namespace, every
        // write timed below would also have this process catch up on it (a query and its decoding
        // on the same two cores), which is the listener's cost, not the writer's (PostgreSQLLatency
        // measures that path); the raw baseline has no listener.
        options.applicationName = "bench-cached"
        options.namespace = "bench-cached-\(UUID().uuidString)"
        cached = try PostgreSQLProvider(options: options).cached()
        memory = MemoryProvider()
        memoryCached = MemoryProvider().cached()
        for store in [provider, memory] as [any DefaultsProvider] { try store.setValue(.int(42), forKey: "read") }
        try memoryCached.setValue(.int(42), forKey: "read")
        try cached.setValue(.int(42), forKey: "read")
        guard case .unixSocket(let path) = options.server else {
            throw BenchmarkFailure(description: "The benchmarks compare over a Unix socket: give a postgres:/SOCKET/DIR store string.")
        }
        var configuration = PostgresConnection.Configuration(
            unixSocketPath: path, username: options.user, password: options.password, database: options.database)
        configuration.tls = .disable
        raw = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1, logger: Logger(label: "bench")
        ).wait()
        _ = try raw.query("CREATE TABLE IF NOT EXISTS raw_bench (k text PRIMARY KEY, v bytea NOT NULL)", logger: Self.logger).wait()
    }

    static let logger = Logger(label: "bench")

    /// A value not stored before, so that neither side can skip the write.
    func nextValue() -> Int64 { counter.withLock { $0 += 1; return $0 } }

    func rawUpsert(_ key: String, _ value: Int64) throws {
        var binds = PostgresBindings()
        binds.append(key)
        binds.append(ByteBuffer(bytes: BinaryValueBytes.int(value)))
        _ = try raw.query(
            PostgresQuery(unsafeSQL: "INSERT INTO raw_bench (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v", binds: binds),
            logger: Self.logger
        ).wait()
    }

    func rawBatch(_ value: Int64) throws {
        var binds = PostgresBindings()
        binds.append(Self.batchKeys)
        binds.append(Array(repeating: ByteBuffer(bytes: BinaryValueBytes.int(value)), count: Self.batchKeys.count))
        _ = try raw.query(
            PostgresQuery(
                unsafeSQL: "INSERT INTO raw_bench (k, v) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
                binds: binds),
            logger: Self.logger
        ).wait()
    }

    func close() {
        provider.close()
        cached.upstream.close()
        _ = try? raw.close().wait()
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// The bytes the provider stores for an int, so that the raw side writes as much.
enum BinaryValueBytes {
    static func int(_ value: Int64) -> [UInt8] {
        var bytes: [UInt8] = [2]
        var zigzag = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        repeat {
            bytes.append(UInt8(zigzag & 0x7f) | (zigzag >= 0x80 ? 0x80 : 0))
            zigzag >>= 7
        } while zigzag > 0
        return bytes
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, timeUnits: .microseconds, maxDuration: .seconds(3))
    let fixtures = Fixture("postgres") { _ in try Fixtures() }
    Benchmark.setup = { try fixtures.setUp() }
    Benchmark.teardown = {
        try? fixtures.value().close()
        fixtures.tearDown()
    }

    // Reads: the replica is memory, so both are compared with the same read of an in-memory store.
    let replicaRead: (Int) throws -> Void = { count in
        let provider = try fixtures.value().provider
        for _ in 0..<count { blackHole(try provider.value(forKey: "read")) }
    }
    let memoryRead: (Int) throws -> Void = { count in
        let memory = try fixtures.value().memory
        for _ in 0..<count { blackHole(try memory.value(forKey: "read")) }
    }
    let cachedRead: (Int) throws -> Void = { count in
        let cached = try fixtures.value().cached
        for _ in 0..<count { blackHole(try cached.value(forKey: "read")) }
    }
    let memoryCachedRead: (Int) throws -> Void = { count in
        let cached = try fixtures.value().memoryCached
        for _ in 0..<count { blackHole(try cached.value(forKey: "read")) }
    }
    Paired.register("Paired: read, PostgreSQLProvider (replica) vs MemoryProvider", repetitions: 1000, subject: replicaRead, baseline: memoryRead)
    Paired.register("Paired: cached read, PostgreSQLProvider vs MemoryProvider", repetitions: 1000, subject: cachedRead, baseline: memoryCachedRead)

    // One write, committed: the provider's statement (revision, upsert, notify) vs a raw upsert.
    let providerWrite: (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count { try fixtures.provider.setValue(.int(fixtures.nextValue()), forKey: "k") }
    }
    let rawWrite: (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count { try fixtures.rawUpsert("k", fixtures.nextValue()) }
    }
    Paired.register("Paired: write, PostgreSQLProvider.setValue vs raw postgres-nio autocommit upsert", subject: providerWrite, baseline: rawWrite)

    // A batch of 1000 new values in one transaction.
    let providerBatch: (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count {
            let value = DefaultsValue.int(fixtures.nextValue())
            try fixtures.provider.apply(Fixtures.batchKeys.map { .set($0, value) })
        }
    }
    let rawBatch: (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count { try fixtures.rawBatch(fixtures.nextValue()) }
    }
    Paired.register("Paired: batch of 1000, PostgreSQLProvider.apply vs raw postgres-nio one-statement upsert", subject: providerBatch, baseline: rawBatch)
}
