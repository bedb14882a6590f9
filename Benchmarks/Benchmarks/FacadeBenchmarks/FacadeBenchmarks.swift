import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark
import BenchmarkSupport
import Synchronization

extension DefaultsKeys {
    fileprivate static let writtenCount = DefaultsKey<Int>("written.count", default: 0)
    fileprivate static let writtenName = DefaultsKey<String>("written.name", default: "")
}

// The facade's typed reads against the raw cached read they are built on, side by side: both go
// through the same CachingProvider (here over the in-memory backend; each persistent backend's
// target registers the same reads over itself), so the difference is what the facade adds.
// Then its writes on the in-memory store (issue 24): every write a change, no observer of the
// application, against the bare write to a locked dictionary that is the least a thread-safe
// store does; `mallocCountTotal` shows the allocations per write (0 for a scalar).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, maxDuration: .seconds(2))
    CachedReadBenchmarks.register(prefix: "", name: "facade-memory") { _ in MemoryProvider() }

    let defaults = Defaults(MemoryProvider())
    let bare = Mutex<[String: DefaultsValue]>([:])
    let names = [String(repeating: "a", count: 32), String(repeating: "b", count: 32)]
    let writes = Turns()
    Benchmark("Defaults write changed Int (memory)", configuration: .init(metrics: standardMetrics, scalingFactor: .kilo)) { benchmark in
        for index in benchmark.scaledIterations { defaults[.writtenCount] = index & 1 }
    }
    Benchmark("Defaults write changed String (memory)", configuration: .init(metrics: standardMetrics, scalingFactor: .kilo)) { benchmark in
        for index in benchmark.scaledIterations { defaults[.writtenName] = names[index & 1] }
    }
    Benchmark("Baseline: bare Mutex<[String: DefaultsValue]> write Int", configuration: .init(metrics: standardMetrics, scalingFactor: .kilo)) { benchmark in
        for index in benchmark.scaledIterations { bare.withLock { $0["written.count"] = .int(Int64(index & 1)) } }
    }
    Paired.register(
        "Paired: Defaults write changed Int (memory) vs bare Mutex write Int", repetitions: 1000,
        subject: { count in
            let start = writes.next() &* count  // even: the first write changes the last odd one
            for index in 0..<count { defaults[.writtenCount] = (start &+ index) & 1 }
        },
        baseline: { count in
            for index in 0..<count { bare.withLock { $0["written.count"] = .int(Int64(index & 1)) } }
        })
}
