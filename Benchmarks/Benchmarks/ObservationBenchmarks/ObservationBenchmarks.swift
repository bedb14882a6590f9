import AnyDefaultsCore
import AnyDefaultsMemory
import Benchmark
import BenchmarkSupport

// What Observation costs the read and write paths, side by side with the raw cached provider they
// are built on (the same CachingProvider, so the difference is what the facade and its tracking add).

final class BenchSettings: DefaultsModel {
    @Setting("count") var count = 0
}

extension DefaultsKeys {
    static let observedCount = DefaultsKey<Int>("count", default: 0)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))
    let cheap = Benchmark.Configuration(scalingFactor: .kilo)

    let provider = MemoryProvider(["count": .int(42), "model.count": .int(42)]).cached()
    let defaults = Defaults(provider)
    let trackingByName = Defaults(provider, tracksReadsByName: true)
    let property = Default(.observedCount, store: defaults)
    let model = BenchSettings(store: defaults, prefix: "model.")

    // Reads.
    Benchmark("Baseline: raw cached read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try provider.value(forKey: "count")) }
    }
    Benchmark("Tracked typed read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults[.observedCount]) }
    }
    Benchmark("@Default read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(property.wrappedValue) }
    }
    Benchmark("DefaultsModel @Setting read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(model.count) }
    }
    Benchmark("integer(forKey:), by-name reads not tracked", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults.integer(forKey: "count")) }
    }
    Benchmark("integer(forKey:), by-name reads tracked", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(trackingByName.integer(forKey: "count")) }
    }

    // Writes that change the value (each reports a change, which Observation is told of).
    let rawStore = MemoryProvider().cached()
    Benchmark("Baseline: raw cached write Int", configuration: cheap) { benchmark in
        for index in benchmark.scaledIterations { try rawStore.setValue(.int(Int64(index)), forKey: "count") }
    }
    let writeStore = Defaults(MemoryProvider())
    Benchmark("Defaults typed write Int (Observation told)", configuration: cheap) { benchmark in
        for index in benchmark.scaledIterations { writeStore[.observedCount] = index }
    }

    // The comparisons of the goals timed in pairs (see Paired): each side reads or writes a
    // thousand times, back to back with the other, alternating which goes first.
    func thousand(_ operation: @escaping () throws -> Void) -> (Int) throws -> Void {
        { count in for _ in 0..<count { try operation() } }
    }
    let rawRead = thousand { blackHole(try provider.value(forKey: "count")) }
    let reads: [(String, () throws -> Void)] = [
        ("Tracked typed read Int", { blackHole(defaults[.observedCount]) }),
        ("@Default read Int", { blackHole(property.wrappedValue) }),
        ("DefaultsModel @Setting read Int", { blackHole(model.count) }),
        ("integer(forKey:), by-name reads tracked", { blackHole(trackingByName.integer(forKey: "count")) }),
    ]
    for (name, read) in reads {
        Paired.register("Paired: \(name) vs raw cached read Int", repetitions: 1000, subject: thousand(read), baseline: rawRead)
    }
    let rawWrites = Turns()
    let typedWrites = Turns()
    Paired.register(
        "Paired: Defaults typed write Int (Observation told) vs raw cached write Int", repetitions: 1000,
        subject: thousand { writeStore[.observedCount] = typedWrites.next() },
        baseline: thousand { try rawStore.setValue(.int(Int64(rawWrites.next())), forKey: "count") })
}
