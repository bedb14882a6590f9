import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark
import BenchmarkSupport
import Foundation
import Synchronization

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: standardMetrics, maxDuration: .seconds(2))
    // A read costs tens of nanoseconds, less than reading the clock: time a thousand at once.
    let kilo = Benchmark.Configuration(metrics: standardMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))

    let mutex = Mutex<[String: DefaultsValue]>(["k": .int(1)])
    Benchmark("Baseline: Mutex<[String: DefaultsValue]> read", configuration: kilo) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mutex.withLock { $0["k"] })
        }
    }

    let memory = MemoryProvider(["k": .int(1)])
    Benchmark("MemoryProvider read", configuration: kilo) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try memory.value(forKey: "k"))
        }
    }
    Paired.register(
        "Paired: MemoryProvider read vs bare Mutex read", repetitions: 1000,
        subject: { count in for _ in 0..<count { blackHole(try memory.value(forKey: "k")) } },
        baseline: { count in for _ in 0..<count { blackHole(mutex.withLock { $0["k"] }) } })

    cachingBenchmarks()
}

// MARK: CachingProvider (issue 7)
// Goals, p50 against p50: a cached String read >= 15x faster than UserDefaults.string(forKey:);
// a cached read <= 2x a bare Mutex<[String: DefaultsValue]> lookup; 0 mallocs for a cached Int,
// Bool or Double read; a skipped redundant write <= 2x a cached read.

/// A heap-allocated string (longer than the 15 bytes Swift stores inline), as a real setting is.
private let theme = "solarized-dark-high-contrast"

private func cachingBenchmarks() {
    let kilo = Benchmark.Configuration(metrics: standardMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))
    let values: [String: DefaultsValue] = [
        "ui.theme": .string(theme), "launchCount": .int(42), "onboarded": .bool(true), "volume": .double(0.75),
    ]

    let bare = Mutex<[String: DefaultsValue]>(values)
    Benchmark("Cache baseline: bare Mutex<[String: DefaultsValue]> String lookup", configuration: kilo) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(bare.withLock { $0["ui.theme"] })
        }
    }

    let cache = MemoryProvider(values).cached()
    for key in values.keys { _ = try? cache.value(forKey: key) }

    for (type, key) in [("String", "ui.theme"), ("Int", "launchCount"), ("Bool", "onboarded"), ("Double", "volume")] {
        Benchmark("Cached \(type) read", configuration: kilo) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try cache.value(forKey: key))
            }
        }
    }
    for (type, key, value) in [("Int", "launchCount", DefaultsValue.int(42)), ("String", "ui.theme", .string(theme))] {
        Benchmark("Cached redundant \(type) write (skipped)", configuration: kilo) { benchmark in
            for _ in benchmark.scaledIterations {
                try cache.setValue(value, forKey: key)
            }
        }
    }

    // A write that changes the value, through the cache to the in-memory backend: what replaces
    // UserDefaults.set (in memory until synchronized) for a program that needs no file.
    let changing = Atomic<Int64>(0)
    Benchmark("Cached write of a changed Int (in memory)", configuration: kilo) { benchmark in
        for _ in benchmark.scaledIterations {
            try cache.setValue(.int(changing.wrappingAdd(1, ordering: .relaxed).newValue), forKey: "counter")
        }
    }

    // Foundation's UserDefaults on a suite of its own, made in setup and removed afterwards.
    let foundation = Fixture("core-foundation") { _ in try FoundationSuite(theme: theme) }
    let setUp: Benchmark.BenchmarkSetupHook = { try foundation.setUp() }
    let tearDown: Benchmark.BenchmarkTeardownHook = { foundation.tearDown() }
    Benchmark(
        "Foundation UserDefaults.string(forKey:)", configuration: kilo,
        closure: { benchmark in
            let defaults = try foundation.value().defaults
            for _ in benchmark.scaledIterations {
                blackHole(defaults.string(forKey: "ui.theme"))
            }
        },
        setup: setUp, teardown: tearDown)

    // The same comparisons timed in pairs (see Paired).
    @Sendable func cachedReads(_ key: String) -> @Sendable (Int) throws -> Void {
        { count in for _ in 0..<count { blackHole(try cache.value(forKey: key)) } }
    }
    Paired.register(
        "Paired: cached String read vs Foundation UserDefaults.string(forKey:)", repetitions: 1000,
        setup: setUp, teardown: tearDown, subject: cachedReads("ui.theme"),
        baseline: { count in
            let defaults = try foundation.value().defaults
            for _ in 0..<count { blackHole(defaults.string(forKey: "ui.theme")) }
        })
    Paired.register(
        "Paired: cached String read vs bare Mutex String lookup", repetitions: 1000, subject: cachedReads("ui.theme"),
        baseline: { count in for _ in 0..<count { blackHole(bare.withLock { $0["ui.theme"] }) } })
    for (type, key, value) in [("Int", "launchCount", DefaultsValue.int(42)), ("String", "ui.theme", .string(theme))] {
        Paired.register(
            "Paired: cached redundant \(type) write (skipped) vs cached \(type) read", repetitions: 1000,
            subject: { count in for _ in 0..<count { try cache.setValue(value, forKey: key) } },
            baseline: cachedReads(key))
    }
}

/// A Foundation `UserDefaults` suite holding the theme, removed when released.
///
/// `@unchecked Sendable` is safe: its properties are constants, and `UserDefaults` is documented
/// as thread-safe, though swift-corelibs-foundation does not mark it `Sendable`.
final class FoundationSuite: @unchecked Sendable {
    let name = "anydefaults-benchmark-\(UUID().uuidString)"
    let defaults: UserDefaults

    struct Unavailable: Error {}

    init(theme: String) throws {
        guard let defaults = UserDefaults(suiteName: name) else { throw Unavailable() }
        defaults.set(theme, forKey: "ui.theme")
        self.defaults = defaults
    }

    deinit {
        defaults.removePersistentDomain(forName: name)
    }
}
