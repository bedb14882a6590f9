import AnyDefaultsMemory
import Benchmark
import BenchmarkSupport

// The facade's typed reads against the raw cached read they are built on, side by side: both go
// through the same CachingProvider (here over the in-memory backend; each persistent backend's
// target registers the same reads over itself), so the difference is what the facade adds.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, maxDuration: .seconds(2))
    CachedReadBenchmarks.register(prefix: "", name: "facade-memory") { _ in MemoryProvider() }
}
