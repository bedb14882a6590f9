// SQLiteProvider beside the least a C program must do for the same work on the same table:
// a point read with a prepared statement, one autocommit upsert at the same synchronous setting,
// and a batch in one transaction; then the same through the cache and the facade, reads at scale
// (1k, 100k and 1M keys), opening a 100k-key store, and the memory a cache of 100k keys takes.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target SQLiteBenchmarks
import AnyDefaultsCore
import AnyDefaultsSQLite
import Benchmark
import BenchmarkData
import BenchmarkSupport
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, timeUnits: .nanoseconds, maxDuration: .seconds(2))
    let kilo = Benchmark.Configuration(metrics: standardMetrics, timeUnits: .nanoseconds, scalingFactor: .kilo, maxDuration: .seconds(2))
    // Made when a benchmark runs (not when the tool only lists them), and removed afterwards.
    let fixtures = Fixture("sqlite") { directory in try Fixtures(directory: directory) }
    Benchmark.setup = { try fixtures.setUp() }
    Benchmark.teardown = { fixtures.tearDown() }

    // Each operation is a closure run `count` times: the separate benchmarks run it
    // `scaledIterations` times, and the paired ones (see Paired) time it back to back with its
    // baseline, which is steadier on a shared machine.
    func separate(_ name: String, _ configuration: Benchmark.Configuration? = nil, _ operation: @escaping (Int) throws -> Void) {
        Benchmark(name, configuration: configuration ?? Benchmark.defaultConfiguration) { benchmark in
            try operation(benchmark.scaledIterations.count)
        }
    }

    // MARK: Point read of an int (uncached)

    let rawRead: (Int) throws -> Void = { count in
        let raw = try fixtures.value().rawRead
        for _ in 0..<count { blackHole(raw.read(key: Fixtures.rawReadKey)) }
    }
    let providerRead: (Int) throws -> Void = { count in
        let provider = try fixtures.value().providerRead
        for _ in 0..<count { blackHole(try provider.value(forKey: Fixtures.readKey)) }
    }
    separate("Read: raw C prepared statement", kilo, rawRead)
    separate("Read: SQLiteProvider.value(forKey:)", kilo, providerRead)
    Paired.register("Paired: read, SQLiteProvider vs raw C", repetitions: 100, subject: providerRead, baseline: rawRead)

    // MARK: One durable write of a new value (SQLite skips writing a page whose bytes do not
    // change, and the provider skips equal values when observed, so every write stores a new one)

    for durability in [SQLiteProvider.Durability.normal, .full] {
        let name = durability == .normal ? "NORMAL" : "FULL"
        let raw: (Int) throws -> Void = { count in
            let fixtures = try fixtures.value()
            for _ in 0..<count { fixtures.rawWrite[durability]?.upsert(key: "k", value: fixtures.nextValue()) }
        }
        separate("Write \(name): raw C autocommit upsert", nil, raw)
        // With an observer the provider also reads the old value in the transaction, to report
        // only real changes; the cache observes its upstream, so the cached write is the observed
        // write plus the cache's work. While another process watches the store, each write also
        // logs the key it changed, for that process (schema version 2's change log).
        let subjects: [(String, @Sendable (Fixtures) -> (any DefaultsProvider)?)] = [
            ("SQLiteProvider.setValue", { $0.providerWrite[durability] }),
            ("SQLiteProvider.setValue, observed", { $0.observedWrite[durability] }),
            ("cached SQLiteProvider.setValue", { $0.cachedWrite[durability] }),
            ("SQLiteProvider.setValue, another process watching", { $0.watchedWrite[durability] }),
        ]
        for (title, pick) in subjects {
            let write: (Int) throws -> Void = { count in
                let fixtures = try fixtures.value()
                for _ in 0..<count { try pick(fixtures)?.setValue(.int(fixtures.nextValue()), forKey: "k") }
            }
            separate("Write \(name): \(title)", nil, write)
            Paired.register("Paired: write \(name), \(title) vs raw C autocommit upsert", subject: write, baseline: raw)
        }
    }

    // MARK: A batch of ten new values in one transaction (synchronous NORMAL)

    let rawBatch: (Int) throws -> Void = { count in
        let fixtures = try fixtures.value()
        for _ in 0..<count { fixtures.rawBatch.batch(keys: Fixtures.rawBatchKeys, value: fixtures.nextValue()) }
    }
    separate("Batch of 10 NORMAL: raw C one transaction", nil, rawBatch)
    let batches: [(String, @Sendable (Fixtures) -> any DefaultsProvider)] = [
        ("SQLiteProvider.apply", { $0.providerBatch }), ("cached SQLiteProvider.apply", { $0.cachedBatch }),
    ]
    for (title, pick) in batches {
        let batch: (Int) throws -> Void = { count in
            let fixtures = try fixtures.value()
            for _ in 0..<count {
                let value = DefaultsValue.int(fixtures.nextValue())
                try pick(fixtures).apply(Fixtures.batchKeys.map { .set($0, value) })
            }
        }
        separate("Batch of 10 NORMAL: \(title)", nil, batch)
        Paired.register("Paired: batch of 10 NORMAL, \(title) vs raw C one transaction", subject: batch, baseline: rawBatch)
    }

    // MARK: Cached reads and the facade over SQLite

    CachedReadBenchmarks.register(prefix: "Cached: ", name: "sqlite-cached") { directory in
        try SQLiteProvider(path: directory.appendingPathComponent("cached.sqlite").path)
    }

    // What the check for other processes' commits costs a cached read.
    CoherentReadBenchmark.register("sqlite-coherent") { directory in
        try SQLiteProvider(path: directory.appendingPathComponent("coherent.sqlite").path)
    }

    // MARK: Scale

    scaleBenchmarks()
}

/// Point reads of random keys in stores of 1k, 100k and 1M keys; opening a 100k-key store and
/// reading one key; the memory of a cache holding 100k keys.
private func scaleBenchmarks() {
    ScaleBenchmark.register("sqlite-scale") { directory, count in try SQLiteScaleStore(directory: directory, count: count) }
    PrefixBenchmark.register("sqlite-prefix") { directory, count in
        let path = directory.appendingPathComponent("prefix.sqlite").path
        let building = try SQLiteProvider(path: path)
        try building.apply(ScaleKeys.changes(count: count) + PrefixBenchmark.tenantChanges)
        building.close()
        return try SQLiteProvider(path: path)
    }

    // Opening a 100k-key store and reading one random key, then closing it, beside raw C; and
    // opening it with a preloaded cache beside a raw C scan of every row. No other connection
    // is open on the file, as when a program starts.
    let opened = Fixture("sqlite-open") { directory in
        let store = try SQLiteScaleStore(directory: directory, count: 100_000)
        return (path: store.path, sample: store.sample)
    }
    func open(_ body: @escaping (String, String) throws -> Void) -> (Int) throws -> Void {
        { count in
            let store = try opened.value()
            for _ in 0..<count { try body(store.path, store.sample[Int.random(in: store.sample.indices)]) }
        }
    }
    Paired.register(
        "Open 100k keys + first read: SQLiteProvider vs raw C, paired",
        setup: { try opened.setUp() }, teardown: { opened.tearDown() },
        subject: open { path, key in
            let provider = try SQLiteProvider(path: path)
            blackHole(try provider.value(forKey: key))
            provider.close()
        },
        baseline: open { path, key in blackHole(RawSQLite.openAndRead(path: path, key: key)) })
    Paired.register(
        "Open 100k keys + preload + first read: cached SQLiteProvider vs raw C scan of every row, paired", maxDuration: .seconds(6),
        setup: { try opened.setUp() }, teardown: { opened.tearDown() },
        subject: open { path, key in
            let provider = try SQLiteProvider(path: path)
            blackHole(try provider.cached(preload: true).value(forKey: key))
            provider.close()
        },
        baseline: open { path, _ in blackHole(RawSQLite.openAndScan(path: path)) })

    // The resident memory a cache of 100k keys adds, beside the plain dictionary of the same
    // values (what allValues() returns).
    let memory = Benchmark.Configuration(
        metrics: [.throughput, ResidentMemory.metric], timeUnits: .milliseconds, maxDuration: .seconds(10), maxIterations: 8)
    let store = Fixture("sqlite-memory") { directory in try SQLiteScaleStore(directory: directory, count: 100_000, mixed: true) }
    Benchmark(
        "Memory: CachingProvider preloaded with 100k keys", configuration: memory,
        closure: { benchmark in
            let provider = try store.value().provider
            try ResidentMemory.measure(benchmark) {
                let cache = provider.cached()
                try cache.preload()
                return cache
            }
        }, setup: { try store.setUp() }, teardown: { store.tearDown() })
    Benchmark(
        "Memory: [String: DefaultsValue] of the same 100k keys", configuration: memory,
        closure: { benchmark in
            let provider = try store.value().provider
            try ResidentMemory.measure(benchmark) { try provider.allValues() }
        }, setup: { try store.setUp() }, teardown: { store.tearDown() })
}
