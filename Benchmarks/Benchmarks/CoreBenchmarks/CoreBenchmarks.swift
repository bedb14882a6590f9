import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark
import Foundation
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

    cachingBenchmarks()
}

// MARK: CachingProvider (issue 7)
// Goals, p50 against p50: a cached String read >= 15x faster than UserDefaults.string(forKey:);
// a cached read <= 2x a bare Mutex<[String: DefaultsValue]> lookup; 0 mallocs for a cached Int,
// Bool or Double read; a skipped redundant write <= 2x a cached read.

/// A heap-allocated string (longer than the 15 bytes Swift stores inline), as a real setting is.
private let theme = "solarized-dark-high-contrast"

private func cachingBenchmarks() {
    let kilo = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(2))
    let values: [String: DefaultsValue] = [
        "ui.theme": .string(theme), "launchCount": .int(42), "onboarded": .bool(true), "volume": .double(0.75),
    ]

    let bare = Mutex<[String: DefaultsValue]>(values)
    Benchmark("Cache baseline: bare Mutex<[String: DefaultsValue]> String lookup", configuration: kilo) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(bare.withLock { $0["ui.theme"] })
        }
    }

    let cache = InMemoryProvider(values).cached()
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

    // Foundation's UserDefaults on a suite of its own, removed when the benchmark ends.
    let suiteName = "anydefaults-benchmark-\(UUID().uuidString)"
    guard let defaults = UserDefaults(suiteName: suiteName) else { return }
    defaults.set(theme, forKey: "ui.theme")
    Benchmark(
        "Foundation UserDefaults.string(forKey:)", configuration: kilo,
        closure: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(defaults.string(forKey: "ui.theme"))
            }
        },
        teardown: { defaults.removePersistentDomain(forName: suiteName) })
}
