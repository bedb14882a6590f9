import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark
import Synchronization

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))

    let mutex = Mutex<[String: DefaultsValue]>(["k": .int(1)])
    Benchmark("Baseline: Mutex<[String: DefaultsValue]> read") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mutex.withLock { $0["k"] })
        }
    }

    let memory = InMemoryProvider(["k": .int(1)])
    Benchmark("InMemoryProvider read") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try memory.value(forKey: "k"))
        }
    }
}
