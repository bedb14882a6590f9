import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark

// The facade's typed reads against the raw cached read they are built on, side by side: both go
// through the same CachingProvider, so the difference is what the facade adds.

struct BenchLayout: Codable, Sendable, DefaultsCodable {
    var columns: Int
    var sidebar: Bool
    var title: String
    var widths: [Double]
}

extension DefaultsKeys {
    static let benchCount = DefaultsKey<Int>("count", default: 0)
    static let benchName = DefaultsKey<String>("name", default: "")
    static let benchLayout = DefaultsKey<BenchLayout>(
        "layout", default: BenchLayout(columns: 0, sidebar: false, title: "", widths: []))
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))
    let cheap = Benchmark.Configuration(scalingFactor: .kilo)

    let layout = BenchLayout(columns: 3, sidebar: true, title: "Main window", widths: [120, 480, 240])
    let provider = InMemoryProvider([
        "count": .int(42),
        "name": .string("a settings value longer than fifteen bytes"),
        "layout": (try? layout.defaultsValue) ?? .dictionary([:]),
    ]).cached()
    let defaults = Defaults(provider)   // uses that cache, does not wrap it again

    Benchmark("Baseline: raw cached read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try provider.value(forKey: "count")) }
    }
    Benchmark("Defaults typed read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults[.benchCount]) }
    }
    Benchmark("Defaults integer(forKey:)", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults.integer(forKey: "count")) }
    }

    Benchmark("Baseline: raw cached read String", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try provider.value(forKey: "name")) }
    }
    Benchmark("Defaults typed read String", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults[.benchName]) }
    }

    Benchmark("Baseline: raw cached read and decode Codable", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations {
            if let stored = try provider.value(forKey: "layout") { blackHole(try BenchLayout(defaultsValue: stored)) }
        }
    }
    Benchmark("Defaults typed read Codable", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults[.benchLayout]) }
    }
}
