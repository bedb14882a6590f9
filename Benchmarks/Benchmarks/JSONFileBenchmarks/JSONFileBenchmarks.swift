import AnyDefaultsCore
import AnyDefaultsJSONFile
import Benchmark
import BenchmarkSupport
import Foundation
import Synchronization

// JSONFileProvider against its raw baselines, side by side in one run:
// - a write through the provider (plain, cached, or a batch of ten changes) vs writing the same
//   bytes with a bare atomic file write (temporary file, fsync, rename, fsync of the directory);
// - a read (served from memory) vs a bare Mutex<[String: DefaultsValue]> lookup, and the cached
//   and facade reads over the provider.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, maxDuration: .seconds(3))
    // Made when a benchmark runs (not when the tool only lists them), and removed afterwards.
    let fixtures = Fixture("jsonfile") { directory in try JSONFileFixtures(directory: directory) }
    Benchmark.setup = { try fixtures.setUp() }
    Benchmark.teardown = { fixtures.tearDown() }

    Benchmark("Baseline: atomic write of the same bytes") { benchmark in
        let write = try fixtures.value().single
        for _ in benchmark.scaledIterations { try write.writeBare() }
    }
    Benchmark("JSONFileProvider write") { benchmark in
        let write = try fixtures.value().single
        for _ in benchmark.scaledIterations { try write.writeThrough() }
    }

    // The same comparisons with both writes timed in pairs (see Paired): the disk's sync latency
    // swings by an order of magnitude with what else runs on the machine, which separate
    // benchmarks (run one after the other) cannot cancel out, and pairing does.
    let paired: [(String, @Sendable (JSONFileFixtures) -> PairedWrite)] = [
        ("JSONFileProvider write vs bare write, paired", { $0.single }),
        ("Cached JSONFileProvider write vs bare write, paired", { $0.cached }),
        ("JSONFileProvider batch of 10 vs bare write, paired", { $0.batch }),
    ]
    for (name, pick) in paired {
        Paired.register(
            name, maxDuration: .seconds(3),
            subject: { count in try pick(fixtures.value()).writeThrough(count) },
            baseline: { count in try pick(fixtures.value()).writeBare(count) })
    }

    let kilo = Benchmark.Configuration(metrics: standardMetrics, scalingFactor: .kilo)
    let mutex = Mutex<[String: DefaultsValue]>(sampleValues())
    Benchmark("Baseline: Mutex<[String: DefaultsValue]> read", configuration: kilo) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mutex.withLock { $0["ui.theme"] })
        }
    }
    Benchmark("JSONFileProvider read", configuration: kilo) { benchmark in
        let provider = try fixtures.value().provider
        for _ in benchmark.scaledIterations {
            blackHole(try provider.value(forKey: "ui.theme"))
        }
    }
    Paired.register(
        "Paired: JSONFileProvider read vs bare Mutex read", repetitions: 1000,
        subject: { count in
            let provider = try fixtures.value().provider
            for _ in 0..<count { blackHole(try provider.value(forKey: "ui.theme")) }
        },
        baseline: { count in for _ in 0..<count { blackHole(mutex.withLock { $0["ui.theme"] }) } })

    CachedReadBenchmarks.register(prefix: "Cached: ", name: "jsonfile-cached") { directory in
        try JSONFileProvider(path: directory.appendingPathComponent("cached.json").path)
    }
}
