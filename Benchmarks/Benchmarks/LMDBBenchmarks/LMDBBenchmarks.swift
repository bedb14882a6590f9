// LMDBProvider beside the least a C program must do for the same work on a store of the same
// shape: a point read with mdb_get in a renewed (mdb_txn_reset / mdb_txn_renew) read transaction,
// one write (mdb_txn_begin, mdb_put, mdb_txn_commit) at the same sync setting, and a batch in one
// write transaction; a write behind a journal (journal=on) beside the cheapest raw commit that
// survives a killed process; then the same through the cache and the facade, reads at scale (1k, 100k
// and 1M keys), and opening a 100k-key store.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target LMDBBenchmarks
import AnyDefaultsCore
import AnyDefaultsLMDB
import Benchmark
import BenchmarkData
import BenchmarkSupport
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, maxDuration: .seconds(2))
    let kilo = Benchmark.Configuration(metrics: standardMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))
    // Made when a benchmark runs (not when the tool only lists them), and removed afterwards.
    let fixtures = Fixture("lmdb") { directory in try LMDBFixtures(directory: directory) }
    Benchmark.setup = { try fixtures.setUp() }
    Benchmark.teardown = { fixtures.tearDown() }

    // MARK: Point read of an int (uncached)

    let rawRead: @Sendable (Int) throws -> Void = { count in
        let raw = try fixtures.value().raw[.synced]
        for _ in 0..<count { blackHole(raw?.read(LMDBFixtures.readKey)) }
    }
    let providerRead: @Sendable (Int) throws -> Void = { count in
        let provider = try fixtures.value().providers[.synced]
        for _ in 0..<count { blackHole(try provider?.value(forKey: LMDBFixtures.readKey)) }
    }
    Benchmark("Read: raw C mdb_get in a renewed read transaction", configuration: kilo) { benchmark in
        try rawRead(benchmark.scaledIterations.count)
    }
    Benchmark("Read: LMDBProvider.value(forKey:)", configuration: kilo) { benchmark in
        try providerRead(benchmark.scaledIterations.count)
    }
    // On a shared machine the load swings between two benchmarks run one after the other: the
    // comparisons of the goals are also timed in pairs (see Paired).
    Paired.register("Read: LMDBProvider vs raw C, paired", repetitions: 1000, subject: providerRead, baseline: rawRead)

    // MARK: One write of a new value (a value equal to the stored one would not be written)

    for durability in [LMDBProvider.Options.Durability.synced, .noSync, .mapped] {
        let name = switch durability {
        case .synced: "synced"
        case .noSync: "MDB_NOSYNC"
        case .mapped: "MDB_WRITEMAP"
        }
        let raw: @Sendable (Int) throws -> Void = { count in
            let fixtures = try fixtures.value()
            for _ in 0..<count { fixtures.raw[durability]?.write(key: "k", value: fixtures.nextNumber()) }
        }
        // A store that another process watches also logs the key each write changed.
        let subjects: [(String, @Sendable (LMDBFixtures) -> (any DefaultsProvider)?)] = [
            ("LMDBProvider", { $0.providers[durability] }), ("cached LMDBProvider", { $0.cached[durability] }),
            ("LMDBProvider, another process watching", { $0.watched[durability] }),
        ]
        Benchmark("Write \(name): raw C put and commit") { benchmark in
            try raw(benchmark.scaledIterations.count)
        }
        for (title, pick) in subjects {
            let write: @Sendable (Int) throws -> Void = { count in
                let fixtures = try fixtures.value()
                for _ in 0..<count { try pick(fixtures)?.setValue(.int(fixtures.nextNumber()), forKey: "k") }
            }
            // "LMDBProvider.setValue", "cached LMDBProvider.setValue", "LMDBProvider.setValue, another process watching"
            let separate = title.replacingOccurrences(of: "LMDBProvider", with: "LMDBProvider.setValue")
            Benchmark("Write \(name): \(separate)") { benchmark in
                try write(benchmark.scaledIterations.count)
            }
            Paired.register("Write \(name): \(title) vs raw C, paired", subject: write, baseline: raw)
        }
    }

    // MARK: One write behind a journal (journal=on), against the cheapest raw commit that also
    // survives a killed process (MDB_WRITEMAP | MDB_NOSYNC: no write call, no sync)

    let rawMapped: @Sendable (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count { fixtures.raw[.mapped]?.write(key: "k", value: fixtures.nextNumber()) }
    }
    let journaledSubjects: [(String, @Sendable (LMDBFixtures) -> any DefaultsProvider)] = [
        ("journaled LMDBProvider", { $0.journaled }), ("cached journaled LMDBProvider", { $0.journaledCached }),
    ]
    for (title, pick) in journaledSubjects {
        let write: @Sendable (Int) throws -> Void = { count in
            let fixtures = try fixtures.value()
            for _ in 0..<count { try pick(fixtures).setValue(.int(fixtures.nextNumber()), forKey: "k") }
        }
        // "Write journal=on: journaled LMDBProvider.setValue", "Write journal=on: cached journaled LMDBProvider.setValue"
        Benchmark("Write journal=on: \(title).setValue") { benchmark in
            try write(benchmark.scaledIterations.count)
        }
        Paired.register("Write journal=on: \(title) vs raw C MDB_WRITEMAP put and commit, paired", subject: write, baseline: rawMapped)
    }

    // MARK: A batch of ten new values in one write transaction (synced)

    let rawBatch: @Sendable (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count { fixtures.raw[.synced]?.write(keys: LMDBFixtures.batchKeys, value: fixtures.nextNumber()) }
    }
    Benchmark("Batch of 10 synced: raw C one transaction") { benchmark in
        try rawBatch(benchmark.scaledIterations.count)
    }
    let batches: [(String, @Sendable (LMDBFixtures) -> any DefaultsProvider)] = [
        ("LMDBProvider.apply", { $0.batchProvider }), ("cached LMDBProvider.apply", { $0.cachedBatch }),
    ]
    for (title, pick) in batches {
        let batch: @Sendable (Int) throws -> Void = { count in
            let fixtures = try fixtures.value()
            for _ in 0..<count {
                let value = DefaultsValue.int(fixtures.nextNumber())
                try pick(fixtures).apply(LMDBFixtures.batchKeys.map { .set($0, value) })
            }
        }
        Benchmark("Batch of 10 synced: \(title)") { benchmark in
            try batch(benchmark.scaledIterations.count)
        }
        Paired.register("Batch of 10 synced: \(title) vs raw C one transaction, paired", subject: batch, baseline: rawBatch)
    }

    // MARK: Cached reads and the facade over LMDB

    CachedReadBenchmarks.register(prefix: "Cached: ", name: "lmdb-cached") { directory in
        try LMDBProvider(path: directory.appendingPathComponent("cached").path)
    }

    // What the check for other processes' commits costs a cached read.
    CoherentReadBenchmark.register("lmdb-coherent") { directory in
        try LMDBProvider(path: directory.appendingPathComponent("coherent").path)
    }

    // MARK: Scale

    scaleBenchmarks()
}

/// Point reads of random keys in stores of 1k, 100k and 1M keys, and opening a 100k-key store
/// to read one key.
private func scaleBenchmarks() {
    ScaleBenchmark.register("lmdb-scale") { directory, count in try LMDBScaleStore(directory: directory, count: count, raw: true) }
    PrefixBenchmark.register("lmdb-prefix") { directory, count in
        let provider = try LMDBProvider(path: directory.appendingPathComponent("prefix").path)
        try provider.apply(ScaleKeys.changes(count: count) + PrefixBenchmark.tenantChanges)
        return provider
    }

    // Opening a 100k-key store, reading one random key and closing it, through the provider and
    // with the C API, in turn (never both open at once: one environment per file per process).
    let opened = Fixture("lmdb-open") { directory in
        let store = try LMDBScaleStore(directory: directory, count: 100_000, raw: false)
        store.provider.close()
        return (path: store.path, sample: store.sample)
    }
    Paired.register(
        "Open 100k keys + first read: LMDBProvider vs raw C, paired",
        setup: { try opened.setUp() }, teardown: { opened.tearDown() },
        subject: { count in
            let store = try opened.value()
            for _ in 0..<count {
                let provider = try LMDBProvider(path: store.path)
                blackHole(try provider.value(forKey: store.sample[Int.random(in: store.sample.indices)]))
                provider.close()
            }
        },
        baseline: { count in
            let store = try opened.value()
            for _ in 0..<count { blackHole(RawLMDBStore.openAndRead(path: store.path, key: store.sample[Int.random(in: store.sample.indices)])) }
        })
}
