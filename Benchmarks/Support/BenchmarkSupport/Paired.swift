import Benchmark
import Synchronization

/// Comparisons timed in pairs: the subject and its baseline run back to back, alternating which
/// goes first, and each pair's time ratio is recorded.
///
/// On a shared machine the cost of an operation drifts with what else runs (CPU contention,
/// other processes' disk flushes) by more than the differences measured here. Two benchmarks
/// run one after the other see different conditions; the two halves of a pair see the same, so
/// the median of the per-pair ratios is stable where the ratio of two medians is not.
public enum Paired {
    /// The metric a paired benchmark records: subject time / baseline time × 1000, per pair.
    public static let metric = custom("paired ratio ×1000")

    /// A further ratio metric, for benchmarks that time more than two operations at once.
    public static func custom(_ name: String) -> BenchmarkMetric {
        .custom(name, polarity: .prefersSmaller, useScalingFactor: false)
    }

    /// Runs `operations` one after the other, starting with the one at `turn` (modulo their
    /// count) so that each goes first equally often, and returns each one's duration, in the
    /// order given.
    public static func time(turn: Int, _ operations: [() throws -> Void]) throws -> [Duration] {
        var durations = [Duration](repeating: .zero, count: operations.count)
        for offset in operations.indices {
            let index = (turn + offset) % operations.count
            let start = ContinuousClock.now
            try operations[index]()
            durations[index] = ContinuousClock.now - start
        }
        return durations
    }

    /// `subject / baseline × 1000`, as recorded in ``metric``.
    public static func permille(_ subject: Duration, _ baseline: Duration) -> Int {
        Int((subject / max(baseline, .nanoseconds(1)) * 1000).rounded())
    }

    /// Registers a benchmark that, in each iteration, runs `subject` and `baseline` back to back
    /// (each given `repetitions`, to do that many operations) and records their time ratio in
    /// ``metric``. Cheap operations are repeated so that a timed block lasts some microseconds.
    public static func register(
        _ name: String, repetitions: Int = 1, maxDuration: Duration = .seconds(2),
        setup: Benchmark.BenchmarkSetupHook? = nil, teardown: Benchmark.BenchmarkTeardownHook? = nil,
        subject: @escaping (Int) throws -> Void, baseline: @escaping (Int) throws -> Void
    ) {
        registerInterleaved(
            name, repetitions: repetitions, maxDuration: maxDuration, setup: setup, teardown: teardown,
            operations: [subject, baseline], ratios: [Ratio(metric: metric, subject: 0, baseline: 1)])
    }

    /// One ratio an interleaved benchmark records: the time of `operations[subject]` over that
    /// of `operations[baseline]`, × 1000, in `metric`.
    public struct Ratio: Sendable {
        public var metric: BenchmarkMetric
        public var subject: Int
        public var baseline: Int

        public init(metric: BenchmarkMetric, subject: Int, baseline: Int) {
            self.metric = metric
            self.subject = subject
            self.baseline = baseline
        }
    }

    /// Registers a benchmark that, in each iteration, runs every one of `operations` once, one
    /// after the other (each given `repetitions`), and records each of `ratios`.
    public static func registerInterleaved(
        _ name: String, repetitions: Int = 1, maxDuration: Duration = .seconds(2),
        setup: Benchmark.BenchmarkSetupHook? = nil, teardown: Benchmark.BenchmarkTeardownHook? = nil,
        operations: [(Int) throws -> Void], ratios: [Ratio]
    ) {
        let turns = Turns()
        let timed = operations.map { operation in { try operation(repetitions) } }
        Benchmark(
            name, configuration: .init(metrics: [.throughput] + ratios.map(\.metric), maxDuration: maxDuration),
            closure: { benchmark in
                for _ in benchmark.scaledIterations {
                    let times = try time(turn: turns.next(), timed)
                    for ratio in ratios {
                        benchmark.measurement(ratio.metric, permille(times[ratio.subject], times[ratio.baseline]))
                    }
                }
            }, setup: setup, teardown: teardown)
    }
}

/// A counter of turns, shared by a benchmark's iterations.
public final class Turns: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// The next turn: 0, 1, 2, …
    public func next() -> Int {
        count.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
