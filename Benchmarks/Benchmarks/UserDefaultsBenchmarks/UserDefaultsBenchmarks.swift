import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Benchmark
import Foundation

// UserDefaultsProvider side by side with plain Foundation UserDefaults on the same kind of suite.
// Each benchmark uses its own suite in the real preferences directory, removed afterwards.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))
    let run = "anydefaults-benchmark-\(getpid())"
    let suites = (read: run + "-read", write: run + "-write", batch: run + "-batch")
    Benchmark.teardown = {
        for suite in [suites.read, suites.write, suites.batch] { try? UserDefaultsProvider.removeSuite(named: suite) }
    }
    let cheap = Benchmark.Configuration(scalingFactor: .kilo)

    // Reads of a value the provider wrote: Foundation reads the same file.
    let seed: Benchmark.BenchmarkSetupHook = {
        try UserDefaultsProvider(suiteName: suites.read).setValue(.int(42), forKey: "k")
    }
    Benchmark("Baseline: UserDefaults object(forKey:)", configuration: cheap, closure: { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.read) else { return }
        for _ in benchmark.scaledIterations {
            blackHole(defaults.object(forKey: "k"))
        }
    }, setup: seed)
    Benchmark("UserDefaultsProvider value(forKey:)", configuration: cheap, closure: { benchmark in
        guard let provider = try? UserDefaultsProvider(suiteName: suites.read) else { return }
        for _ in benchmark.scaledIterations {
            blackHole(try? provider.value(forKey: "k"))
        }
    }, setup: seed)

    // Writes. Values alternate, so that no write stores what is already stored.
    Benchmark("Baseline: UserDefaults set (memory only)") { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.write) else { return }
        for index in benchmark.scaledIterations {
            defaults.set(index & 1, forKey: "k")
        }
    }
    Benchmark("Baseline: UserDefaults set + synchronize()") { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.write) else { return }
        for index in benchmark.scaledIterations {
            defaults.set(index & 1, forKey: "k")
            defaults.synchronize()
        }
    }
    Benchmark("UserDefaultsProvider setValue (durable)") { benchmark in
        guard let provider = try? UserDefaultsProvider(suiteName: suites.write) else { return }
        for index in benchmark.scaledIterations {
            try? provider.setValue(.int(Int64(index & 1)), forKey: "k")
        }
    }

    // A batch of ten keys.
    Benchmark("Baseline: UserDefaults 10 × set + synchronize()") { benchmark in
        guard let defaults = UserDefaults(suiteName: suites.batch) else { return }
        for index in benchmark.scaledIterations {
            for key in 0..<10 { defaults.set(index & 1, forKey: "k\(key)") }
            defaults.synchronize()
        }
    }
    Benchmark("UserDefaultsProvider apply 10 changes") { benchmark in
        guard let provider = try? UserDefaultsProvider(suiteName: suites.batch) else { return }
        for index in benchmark.scaledIterations {
            try? provider.apply((0..<10).map { .set("k\($0)", .int(Int64(index & 1))) })
        }
    }
}
