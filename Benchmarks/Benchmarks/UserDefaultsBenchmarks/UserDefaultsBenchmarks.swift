import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Benchmark
import BenchmarkSupport
import Foundation
import Synchronization

// UserDefaultsProvider side by side with plain Foundation UserDefaults on the same kind of suite,
// plain and through the cache. Each benchmark uses its own suite in the real preferences
// directory, removed afterwards.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, maxDuration: .seconds(2))
    let run = "anydefaults-benchmark-\(getpid())"
    let suites = (read: run + "-read", write: run + "-write", batch: run + "-batch", cached: run + "-cached")
    Benchmark.teardown = {
        for suite in [suites.read, suites.write, suites.batch, suites.cached] + PairedSuites.names(run) {
            try? UserDefaultsProvider.removeSuite(named: suite)
        }
    }
    let cheap = Benchmark.Configuration(metrics: standardMetrics, scalingFactor: .kilo)

    // Reads of values the provider wrote: Foundation reads the same file.
    let name = "a settings value longer than fifteen bytes"
    let seed: Benchmark.BenchmarkSetupHook = {
        try UserDefaultsProvider(suiteName: suites.read).apply([.set("k", .int(42)), .set("name", .string(name))])
    }
    Benchmark("Baseline: UserDefaults object(forKey:)", configuration: cheap, closure: { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.read) else { return }
        for _ in benchmark.scaledIterations {
            blackHole(defaults.object(forKey: "k"))
        }
    }, setup: seed)
    Benchmark("Baseline: UserDefaults string(forKey:)", configuration: cheap, closure: { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.read) else { return }
        for _ in benchmark.scaledIterations {
            blackHole(defaults.string(forKey: "name"))
        }
    }, setup: seed)
    Benchmark("UserDefaultsProvider value(forKey:)", configuration: cheap, closure: { benchmark in
        let provider = try UserDefaultsProvider(suiteName: suites.read)
        for _ in benchmark.scaledIterations {
            blackHole(try provider.value(forKey: "k"))
        }
    }, setup: seed)

    // Writes. Values alternate, counting across the benchmark's iterations, so that no write
    // stores what is already stored (which the provider would skip).
    let counter = Atomic<Int>(0)
    @Sendable func next() -> Int { counter.wrappingAdd(1, ordering: .relaxed).newValue & 1 }
    Benchmark("Baseline: UserDefaults set (memory only)", configuration: cheap) { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.write) else { return }
        for _ in benchmark.scaledIterations {
            defaults.set(next(), forKey: "k")
        }
    }
    Benchmark("Baseline: UserDefaults set + synchronize()") { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.write) else { return }
        for _ in benchmark.scaledIterations {
            defaults.set(next(), forKey: "k")
            defaults.synchronize()
        }
    }
    Benchmark("UserDefaultsProvider setValue (durable)") { benchmark in
        let provider = try UserDefaultsProvider(suiteName: suites.write)
        for _ in benchmark.scaledIterations {
            try provider.setValue(.int(Int64(next())), forKey: "k")
        }
    }
    Benchmark("Cached UserDefaultsProvider setValue (durable)") { benchmark in
        let cache = try UserDefaultsProvider(suiteName: suites.write).cached()
        for _ in benchmark.scaledIterations {
            try cache.setValue(.int(Int64(next())), forKey: "k")
        }
    }

    // A batch of ten keys.
    Benchmark("Baseline: UserDefaults 10 × set + synchronize()") { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.batch) else { return }
        for _ in benchmark.scaledIterations {
            let value = next()
            for key in 0..<10 { defaults.set(value, forKey: "k\(key)") }
            defaults.synchronize()
        }
    }
    Benchmark("UserDefaultsProvider apply 10 changes") { benchmark in
        let provider = try UserDefaultsProvider(suiteName: suites.batch)
        for _ in benchmark.scaledIterations {
            let value = DefaultsValue.int(Int64(next()))
            try provider.apply((0..<10).map { .set("k\($0)", value) })
        }
    }

    // The comparisons of the goals timed in pairs (see Paired), each side on a suite of its own.
    let pairs = Fixture("userdefaults-paired") { _ in try PairedSuites(run: run) }
    // Each side passes `count` and a value that alternates between 0 and 1 on each call, so that
    // every write changes what is stored.
    func paired(
        _ name: String, repetitions: Int = 1,
        _ subject: @escaping @Sendable (PairedSuites, Int, Int) throws -> Void,
        _ baseline: @escaping @Sendable (PairedSuites, Int, Int) throws -> Void
    ) {
        let subjectTurns = Turns()
        let baselineTurns = Turns()
        Paired.register(
            "Paired: " + name, repetitions: repetitions, setup: { try pairs.setUp() }, teardown: { pairs.tearDown() },
            subject: { count in try subject(pairs.value(), count, subjectTurns.next() & 1) },
            baseline: { count in try baseline(pairs.value(), count, baselineTurns.next() & 1) })
    }
    paired("UserDefaultsProvider value(forKey:) vs UserDefaults object(forKey:)", repetitions: 1000,
        { suites, count, _ in for _ in 0..<count { blackHole(try suites.reader.value(forKey: "k")) } },
        { suites, count, _ in for _ in 0..<count { blackHole(suites.foundationReader.object(forKey: "k")) } })
    paired("cached String read vs UserDefaults string(forKey:)", repetitions: 1000,
        { suites, count, _ in for _ in 0..<count { blackHole(try suites.cachedReader.value(forKey: "name")) } },
        { suites, count, _ in for _ in 0..<count { blackHole(suites.foundationReader.string(forKey: "name")) } })
    paired("UserDefaultsProvider setValue (durable) vs UserDefaults set + synchronize()",
        { suites, _, value in try suites.writer.setValue(.int(Int64(value)), forKey: "k") },
        { suites, _, value in suites.foundationWrite(value) })
    paired("cached UserDefaultsProvider setValue (durable) vs UserDefaults set + synchronize()",
        { suites, _, value in try suites.cachedWriter.setValue(.int(Int64(value)), forKey: "k") },
        { suites, _, value in suites.foundationWrite(value) })
    paired("UserDefaultsProvider apply 10 changes vs UserDefaults 10 × set + synchronize()",
        { suites, _, value in try suites.batchWriter.apply((0..<10).map { .set("k\($0)", .int(Int64(value))) }) },
        { suites, _, value in suites.foundationBatch(value) })

    // Cached reads and the facade over UserDefaultsProvider.
    CachedReadBenchmarks.register(
        prefix: "Cached: ", name: "userdefaults-cached",
        open: { _ in try UserDefaultsProvider(suiteName: suites.cached) },
        cleanup: { try? UserDefaultsProvider.removeSuite(named: suites.cached) })
}

/// The providers and Foundation suites of the paired benchmarks, opened once in setup, each on a
/// suite of its own (removed by the teardown), so that neither side reloads what the other wrote.
///
/// `@unchecked Sendable` is safe: its properties are constants, the providers are `Sendable`,
/// and `UserDefaults` is documented as thread-safe, though swift-corelibs-foundation does not
/// mark it `Sendable`.
final class PairedSuites: @unchecked Sendable {
    let reader: UserDefaultsProvider
    let cachedReader: CachingProvider<UserDefaultsProvider>
    let foundationReader: UserDefaults
    let writer: UserDefaultsProvider
    let cachedWriter: CachingProvider<UserDefaultsProvider>
    let batchWriter: UserDefaultsProvider
    private let foundationWriter: UserDefaults
    private let foundationBatcher: UserDefaults

    struct Unavailable: Error {}

    /// The suites' names for the benchmark run named `run`.
    static func names(_ run: String) -> [String] {
        ["read", "write", "cached-write", "batch", "foundation-write", "foundation-batch"].map { "\(run)-paired-\($0)" }
    }

    init(run: String) throws {
        let names = Self.names(run)
        reader = try UserDefaultsProvider(suiteName: names[0])
        try reader.apply([.set("k", .int(42)), .set("name", .string("a settings value longer than fifteen bytes"))])
        cachedReader = try UserDefaultsProvider(suiteName: names[0]).cached()
        writer = try UserDefaultsProvider(suiteName: names[1])
        cachedWriter = try UserDefaultsProvider(suiteName: names[2]).cached()
        batchWriter = try UserDefaultsProvider(suiteName: names[3])
        guard let foundationReader = UserDefaults(suiteName: names[0]), let foundationWriter = UserDefaults(suiteName: names[4]),
            let foundationBatcher = UserDefaults(suiteName: names[5])
        else { throw Unavailable() }
        self.foundationReader = foundationReader
        self.foundationWriter = foundationWriter
        self.foundationBatcher = foundationBatcher
    }

    /// Stores `value` with plain Foundation and writes it to the file.
    func foundationWrite(_ value: Int) {
        foundationWriter.set(value, forKey: "k")
        foundationWriter.synchronize()
    }

    /// Stores `value` under ten keys with plain Foundation and writes them to the file.
    func foundationBatch(_ value: Int) {
        for key in 0..<10 { foundationBatcher.set(value, forKey: "k\(key)") }
        foundationBatcher.synchronize()
    }
}
