// SQLiteProvider beside the least a C program must do for the same work on the same table:
// a point read with a prepared statement, one autocommit upsert at the same synchronous setting,
// and a batch in one transaction; then the same through the cache and the facade, reads at scale
// (1k, 100k and 1M keys), opening a 100k-key store, and the memory a cache of 100k keys takes.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target SQLiteBenchmarks
import AnyDefaultsCore
import AnyDefaultsSQLite
import Benchmark
import BenchmarkSupport
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, timeUnits: .nanoseconds, maxDuration: .seconds(2))
    let kilo = Benchmark.Configuration(metrics: standardMetrics, timeUnits: .nanoseconds, scalingFactor: .kilo, maxDuration: .seconds(2))
    // Made when a benchmark runs (not when the tool only lists them), and removed afterwards.
    let fixtures = Fixture("sqlite") { directory in try Fixtures(directory: directory) }
    Benchmark.setup = { try fixtures.setUp() }
    Benchmark.teardown = { fixtures.tearDown() }

    // MARK: Point read of an int (uncached)

    Benchmark("Read: raw C prepared statement", configuration: kilo) { benchmark in
        let raw = try fixtures.value().rawRead
        for _ in benchmark.scaledIterations {
            blackHole(raw.read(key: Fixtures.rawReadKey))
        }
    }
    Benchmark("Read: SQLiteProvider.value(forKey:)", configuration: kilo) { benchmark in
        let provider = try fixtures.value().providerRead
        for _ in benchmark.scaledIterations {
            blackHole(try provider.value(forKey: Fixtures.readKey))
        }
    }

    // MARK: One durable write of a new value (SQLite skips writing a page whose bytes do not
    // change, and the provider skips equal values when observed, so every write stores a new one)

    for durability in [SQLiteProvider.Durability.normal, .full] {
        let name = durability == .normal ? "NORMAL" : "FULL"
        Benchmark("Write \(name): raw C autocommit upsert") { benchmark in
            let fixtures = try fixtures.value()
            let raw = fixtures.rawWrite[durability]
            for _ in benchmark.scaledIterations {
                raw?.upsert(key: "k", value: fixtures.nextValue())
            }
        }
        Benchmark("Write \(name): SQLiteProvider.setValue") { benchmark in
            let fixtures = try fixtures.value()
            let provider = fixtures.providerWrite[durability]
            for _ in benchmark.scaledIterations {
                try provider?.setValue(.int(fixtures.nextValue()), forKey: "k")
            }
        }
        // With an observer the provider also reads the old value in the transaction, to report
        // only real changes.
        Benchmark("Write \(name): SQLiteProvider.setValue, observed") { benchmark in
            let fixtures = try fixtures.value()
            let observed = fixtures.observedWrite[durability]
            for _ in benchmark.scaledIterations {
                try observed?.setValue(.int(fixtures.nextValue()), forKey: "k")
            }
        }
        // The cache observes its upstream, so this is the observed write plus the cache's work.
        Benchmark("Write \(name): cached SQLiteProvider.setValue") { benchmark in
            let fixtures = try fixtures.value()
            let cached = fixtures.cachedWrite[durability]
            for _ in benchmark.scaledIterations {
                try cached?.setValue(.int(fixtures.nextValue()), forKey: "k")
            }
        }
    }

    // MARK: A batch of ten new values in one transaction (synchronous NORMAL)

    Benchmark("Batch of 10 NORMAL: raw C one transaction") { benchmark in
        let fixtures = try fixtures.value()
        for _ in benchmark.scaledIterations {
            fixtures.rawBatch.batch(keys: Fixtures.rawBatchKeys, value: fixtures.nextValue())
        }
    }
    Benchmark("Batch of 10 NORMAL: SQLiteProvider.apply") { benchmark in
        let fixtures = try fixtures.value()
        for _ in benchmark.scaledIterations {
            let value = DefaultsValue.int(fixtures.nextValue())
            try fixtures.providerBatch.apply(Fixtures.batchKeys.map { .set($0, value) })
        }
    }
    Benchmark("Batch of 10 NORMAL: cached SQLiteProvider.apply") { benchmark in
        let fixtures = try fixtures.value()
        for _ in benchmark.scaledIterations {
            let value = DefaultsValue.int(fixtures.nextValue())
            try fixtures.cachedBatch.apply(Fixtures.batchKeys.map { .set($0, value) })
        }
    }

    // MARK: The comparisons of the goals timed in pairs (see Paired)

    Paired.register(
        "Paired: read, SQLiteProvider vs raw C", repetitions: 100,
        subject: { count in
            let provider = try fixtures.value().providerRead
            for _ in 0..<count { blackHole(try provider.value(forKey: Fixtures.readKey)) }
        },
        baseline: { count in
            let raw = try fixtures.value().rawRead
            for _ in 0..<count { blackHole(raw.read(key: Fixtures.rawReadKey)) }
        })
    for durability in [SQLiteProvider.Durability.normal, .full] {
        let name = durability == .normal ? "NORMAL" : "FULL"
        let raw: @Sendable (Int) throws -> Void = { count in
            let fixtures = try fixtures.value()
            for _ in 0..<count { fixtures.rawWrite[durability]?.upsert(key: "k", value: fixtures.nextValue()) }
        }
        let subjects: [(String, @Sendable (Fixtures) -> (any DefaultsProvider)?)] = [
            ("SQLiteProvider.setValue", { $0.providerWrite[durability] }),
            ("SQLiteProvider.setValue, observed", { $0.observedWrite[durability] }),
            ("cached SQLiteProvider.setValue", { $0.cachedWrite[durability] }),
        ]
        for (title, pick) in subjects {
            Paired.register(
                "Paired: write \(name), \(title) vs raw C autocommit upsert",
                subject: { count in
                    let fixtures = try fixtures.value()
                    for _ in 0..<count { try pick(fixtures)?.setValue(.int(fixtures.nextValue()), forKey: "k") }
                },
                baseline: raw)
        }
    }
    let batches: [(String, @Sendable (Fixtures) -> any DefaultsProvider)] = [
        ("SQLiteProvider.apply", { $0.providerBatch }), ("cached SQLiteProvider.apply", { $0.cachedBatch }),
    ]
    for (title, pick) in batches {
        Paired.register(
            "Paired: batch of 10 NORMAL, \(title) vs raw C one transaction",
            subject: { count in
                let fixtures = try fixtures.value()
                for _ in 0..<count {
                    let value = DefaultsValue.int(fixtures.nextValue())
                    try pick(fixtures).apply(Fixtures.batchKeys.map { .set($0, value) })
                }
            },
            baseline: { count in
                let fixtures = try fixtures.value()
                for _ in 0..<count { fixtures.rawBatch.batch(keys: Fixtures.rawBatchKeys, value: fixtures.nextValue()) }
            })
    }

    // MARK: Cached reads and the facade over SQLite

    CachedReadBenchmarks.register(prefix: "Cached: ", name: "sqlite-cached") { directory in
        try SQLiteProvider(path: directory.appendingPathComponent("cached.sqlite").path)
    }

    // MARK: Scale

    scaleBenchmarks()
}

/// Point reads of random keys in stores of 1k, 100k and 1M keys; opening a 100k-key store and
/// reading one key; the memory of a cache holding 100k keys.
private func scaleBenchmarks() {
    // The three stores are built in this benchmark's setup (so once per run), each in one
    // transaction, and read in turn, so that the ratios between them are timed in pairs.
    let stores = Fixture("sqlite-scale") { directory in try SQLiteScaleStores(directory: directory) }
    func reads(_ store: @escaping @Sendable (SQLiteScaleStores) -> SQLiteScaleStore, raw: Bool = false) -> @Sendable (Int) throws -> Void {
        let cursor = Turns()
        return { count in
            let store = store(try stores.value())
            let sample = store.sample
            for _ in 0..<count {
                let key = sample[cursor.next() % sample.count]
                if raw { blackHole(store.raw.read(key: key)) } else { blackHole(try store.provider.value(forKey: key)) }
            }
        }
    }
    Paired.registerInterleaved(
        "Scale: point reads of random keys in 1k, 100k and 1M keys, interleaved", repetitions: 1000, maxDuration: .seconds(4),
        setup: { try stores.setUp() }, teardown: { stores.tearDown() },
        operations: [reads(\.small), reads(\.medium), reads(\.large), reads(\.small, raw: true), reads(\.large, raw: true)],
        ratios: [
            .init(metric: Paired.custom("provider 1M/1k ×1000"), subject: 2, baseline: 0),
            .init(metric: Paired.custom("provider 100k/1k ×1000"), subject: 1, baseline: 0),
            .init(metric: Paired.custom("raw C 1M/1k ×1000"), subject: 4, baseline: 3),
            .init(metric: Paired.custom("provider/raw C at 1M ×1000"), subject: 2, baseline: 4),
            .init(metric: Paired.custom("provider/raw C at 1k ×1000"), subject: 0, baseline: 3),
        ])

    // Opening a 100k-key store and reading one random key, then closing it, beside raw C; and
    // opening it with a preloaded cache beside a raw C scan of every row.
    let opened = Fixture("sqlite-open") { directory in try SQLiteScaleStore(directory: directory, count: 100_000) }
    func open(_ body: @escaping @Sendable (SQLiteScaleStore, String) throws -> Void) -> @Sendable (Int) throws -> Void {
        { count in
            let store = try opened.value()
            for _ in 0..<count { try body(store, store.sample[Int.random(in: store.sample.indices)]) }
        }
    }
    Paired.register(
        "Open 100k keys + first read: SQLiteProvider vs raw C, paired",
        setup: { try opened.setUp() }, teardown: { opened.tearDown() },
        subject: open { store, key in
            let provider = try SQLiteProvider(path: store.path)
            blackHole(try provider.value(forKey: key))
            provider.close()
        },
        baseline: open { store, key in blackHole(RawSQLite.openAndRead(path: store.path, key: key)) })
    Paired.register(
        "Open 100k keys + preload + first read: cached SQLiteProvider vs raw C scan of every row, paired", maxDuration: .seconds(6),
        setup: { try opened.setUp() }, teardown: { opened.tearDown() },
        subject: open { store, key in
            let provider = try SQLiteProvider(path: store.path)
            blackHole(try provider.cached(preload: true).value(forKey: key))
            provider.close()
        },
        baseline: open { store, _ in blackHole(RawSQLite.openAndScan(path: store.path)) })

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
