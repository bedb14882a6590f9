import AnyDefaultsMacros
import Benchmark
import BenchmarkSupport

// What an @ObservableDefaults property costs, side by side with the same key read and written
// through Defaults (typed, cached) in the same run: the macro's own part of the read and write.

@ObservableDefaults(prefix: "model.")
final class BenchModel {
    var count = 0
}

@ObservableDefaults(prefix: "model.", ignoreExternalChanges: true)
final class IgnoringBenchModel {
    var count = 0
}

extension DefaultsKeys {
    static let modelCount = DefaultsKey<Int>("model.count", default: 0)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))
    let cheap = Benchmark.Configuration(scalingFactor: .kilo)

    // Reads of one key holding 42, through Defaults and through two models.
    let defaults = Defaults(MemoryProvider(["model.count": .int(42)]))
    let model = BenchModel(store: defaults)
    let ignoring = IgnoringBenchModel(store: defaults)
    Benchmark("Baseline: Defaults typed read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults[.modelCount]) }
    }
    Benchmark("Macro property read Int", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(model.count) }
    }
    Benchmark("Macro property read Int, ignoreExternalChanges", configuration: cheap) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(ignoring.count) }
    }

    // Writes that change the value (each a change Observation is told of), each side on a store
    // of its own of the same kind.
    let writeStore = Defaults(MemoryProvider())
    let modelStore = Defaults(MemoryProvider())
    let writingModel = BenchModel(store: modelStore)
    Benchmark("Baseline: Defaults typed write Int", configuration: cheap) { benchmark in
        for index in benchmark.scaledIterations { writeStore[.modelCount] = index }
    }
    Benchmark("Macro property write Int", configuration: cheap) { benchmark in
        for index in benchmark.scaledIterations { writingModel.count = index }
    }

    // The goals, timed in pairs (see Paired): each side reads or writes a thousand times, back to
    // back with the other, alternating which goes first.
    func thousand(_ operation: @escaping () -> Void) -> (Int) -> Void {
        { count in for _ in 0..<count { operation() } }
    }
    let typedRead = thousand { blackHole(defaults[.modelCount]) }
    Paired.register(
        "Paired: macro property read Int vs Defaults typed read Int", repetitions: 1000,
        subject: thousand { blackHole(model.count) }, baseline: typedRead)
    Paired.register(
        "Paired: macro property read Int, ignoreExternalChanges vs Defaults typed read Int", repetitions: 1000,
        subject: thousand { blackHole(ignoring.count) }, baseline: typedRead)
    let typedWrites = Turns()
    let modelWrites = Turns()
    Paired.register(
        "Paired: macro property write Int vs Defaults typed write Int", repetitions: 1000,
        subject: thousand { writingModel.count = modelWrites.next() },
        baseline: thousand { writeStore[.modelCount] = typedWrites.next() })
}
