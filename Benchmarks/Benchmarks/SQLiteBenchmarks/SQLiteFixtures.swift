import AnyDefaultsCore
import AnyDefaultsSQLite
import Benchmark
import BenchmarkData
import Foundation
import Synchronization

/// The small stores the read, write and batch benchmarks use: a provider (plain, observed, cached,
/// or watched by another process) and a raw connection per case, each on its own file created by
/// SQLiteProvider, so the tables have the same shape.
final class Fixtures: Sendable {
    static let readKey = "settings.key.42"
    static let rawReadKey: StaticString = "settings.key.42"
    /// The keys a batch writes, as the provider and the raw connection spell them.
    static let batchKeys = (0..<10).map { "batch.key.\($0)" }
    static let rawBatchKeys: [StaticString] = [
        "batch.key.0", "batch.key.1", "batch.key.2", "batch.key.3", "batch.key.4",
        "batch.key.5", "batch.key.6", "batch.key.7", "batch.key.8", "batch.key.9",
    ]

    let providerRead: SQLiteProvider
    let rawRead: RawSQLite
    let providerWrite: [SQLiteProvider.Durability: SQLiteProvider]
    let observedWrite: [SQLiteProvider.Durability: SQLiteProvider]
    let cachedWrite: [SQLiteProvider.Durability: CachingProvider<SQLiteProvider>]
    /// Stores that another process watches (a lease on the change log is recorded).
    let watchedWrite: [SQLiteProvider.Durability: SQLiteProvider]
    let rawWrite: [SQLiteProvider.Durability: RawSQLite]
    let providerBatch: SQLiteProvider
    let cachedBatch: CachingProvider<SQLiteProvider>
    let rawBatch: RawSQLite
    private let observations: [DefaultsObservation]
    private let counter = Atomic<Int64>(0)

    init(directory: URL) throws {
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
        var cached: [SQLiteProvider.Durability: CachingProvider<SQLiteProvider>] = [:]
        var watched: [SQLiteProvider.Durability: SQLiteProvider] = [:]
        var raws: [SQLiteProvider.Durability: RawSQLite] = [:]
        var observations: [DefaultsObservation] = []
        for durability in [SQLiteProvider.Durability.normal, .full] {
            providers[durability] = try store("write-provider-\(durability).sqlite", durability)
            let observing = try store("write-observed-\(durability).sqlite", durability)
            observations.append(observing.observe { blackHole($0) })
            observed[durability] = observing
            cached[durability] = try store("write-cached-\(durability).sqlite", durability).cached()
            watched[durability] = try store("write-watched-\(durability).sqlite", durability)
            try RawSQLite.leaseToAnotherProcess(path: directory.appendingPathComponent("write-watched-\(durability).sqlite").path)
            raws[durability] = try raw("write-raw-\(durability).sqlite", durability)
            for kind in ["provider", "observed", "cached", "watched", "raw"] { try warmUp("write-\(kind)-\(durability).sqlite") }
        }
        providerWrite = providers
        observedWrite = observed
        cachedWrite = cached
        watchedWrite = watched
        rawWrite = raws
        providerBatch = try store("batch-provider.sqlite", .normal)
        cachedBatch = try store("batch-cached.sqlite", .normal).cached()
        rawBatch = try raw("batch-raw.sqlite", .normal)
        for kind in ["provider", "cached", "raw"] { try warmUp("batch-\(kind).sqlite") }
        self.observations = observations
    }

    /// A value not stored before.
    func nextValue() -> Int64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
