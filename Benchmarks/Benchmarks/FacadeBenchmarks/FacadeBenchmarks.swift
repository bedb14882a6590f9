import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark
import BenchmarkSupport
import Dispatch
import Synchronization

extension DefaultsKeys {
    fileprivate static let writtenCount = DefaultsKey<Int>("written.count", default: 0)
    fileprivate static let writtenName = DefaultsKey<String>("written.name", default: "")
    fileprivate static let sharedCount = DefaultsKey<Int>("shared.count", default: 0)
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

    // Reads on several threads at once (issue 24): each of `threads` threads makes 10,000 reads
    // of one cached key, so an iteration of the 2-thread benchmark reads twice as much as one of
    // the 1-thread benchmark; equal times mean the reads scale with the threads. The typed read
    // takes the cache's published answer without a lock; the raw cached read takes the cache's
    // lock, shown for contrast. (This machine has 2 cores: 4 threads cannot take less than twice
    // the time of 1.)
    let shared = Defaults(MemoryProvider(["shared.count": .int(7)]))
    guard let sharedCache = shared.provider as? CachingProvider<MemoryProvider> else { return }
    _ = shared[.sharedCount]
    _ = shared[.sharedCount]
    for threads in [1, 2, 4] {
        let label = threads == 1 ? "1 thread" : "\(threads) threads"
        Benchmark("Defaults typed read Int, \(label)", configuration: .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(2))) { benchmark in
            for _ in benchmark.scaledIterations {
                DispatchQueue.concurrentPerform(iterations: threads) { _ in
                    for _ in 0..<10_000 { blackHole(shared[.sharedCount]) }
                }
            }
        }
        Benchmark("Baseline: raw cached read Int (locked), \(label)", configuration: .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(2))) { benchmark in
            for _ in benchmark.scaledIterations {
                DispatchQueue.concurrentPerform(iterations: threads) { _ in
                    for _ in 0..<10_000 { blackHole(try? sharedCache.value(forKey: "shared.count")) }
                }
            }
        }
    }
}
