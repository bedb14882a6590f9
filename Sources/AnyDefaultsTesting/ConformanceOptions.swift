import Foundation

extension DefaultsConformanceSuite {
    /// How the suite runs: the seed of its generated keys, values and operations, how hard it
    /// pushes, and how long it waits.
    ///
    /// ```swift
    /// var options = DefaultsConformanceSuite.Options()
    /// options.seed = 1234                      // reproduce a failure printed with "seed 1234"
    /// options.stress = .thorough               // longer runs: more threads, rounds, kills, steps
    /// let suite = DefaultsConformanceSuite(options: options) { storage in try MyStore(storage) }
    /// ```
    ///
    /// The environment overrides both, so a failing run is reproduced without editing code:
    /// `ANYDEFAULTS_CONFORMANCE_SEED=1234` sets the seed and `ANYDEFAULTS_CONFORMANCE_STRESS` scales
    /// the stress (`thorough`, or a factor such as `4`).
    public struct Options: Sendable {
        /// The environment variable that sets ``seed``.
        public static let seedVariable = "ANYDEFAULTS_CONFORMANCE_SEED"
        /// The environment variable that scales ``stress``: `thorough`, or a factor such as `3`.
        public static let stressVariable = "ANYDEFAULTS_CONFORMANCE_STRESS"

        /// The seed of everything the suite generates. Random unless set here or in
        /// `ANYDEFAULTS_CONFORMANCE_SEED`; every failure prints it.
        public var seed: UInt64
        /// How hard the concurrency, multi-process, crash and model checks push.
        public var stress: Stress
        /// How long the suite waits for a call, an event or a child process before it fails the
        /// check instead of hanging.
        public var timeout: Duration

        public init(seed: UInt64? = nil, stress: Stress = .standard, timeout: Duration = .seconds(20)) {
            let environment = ProcessInfo.processInfo.environment
            self.seed = environment[Self.seedVariable].flatMap { UInt64($0) } ?? seed ?? UInt64.random(in: 1...999_999_999)
            var stress = stress
            if let text = environment[Self.stressVariable] {
                if text == "thorough" { stress = .thorough } else if let factor = Int(text), factor > 0 { stress = stress.scaled(by: factor) }
            }
            self.stress = stress
            self.timeout = timeout
        }
    }

    /// How hard the suite pushes. ``standard`` keeps a whole run to a few seconds per provider;
    /// ``thorough`` (or ``scaled(by:)``) runs longer and catches rarer races.
    public struct Stress: Sendable, Hashable {
        /// Threads writing and reading at once in the concurrency and event checks.
        public var threads: Int
        /// Writes per thread in the concurrency and event checks.
        public var rounds: Int
        /// The largest value (in bytes) replaced under concurrent readers; smaller sizes are
        /// checked too.
        public var largestValue: Int
        /// Child processes writing at once in the multi-process checks.
        public var processes: Int
        /// Times a child process is killed in the middle of a batch.
        public var crashes: Int
        /// Changes in each batch of the crash checks.
        public var crashBatchSize: Int
        /// Operations in each random sequence of the model check.
        public var modelSteps: Int
        /// Random sequences the model check runs.
        public var modelRuns: Int
        /// Random keys and values generated for the round-trip and key checks.
        public var generated: Int

        public init(
            threads: Int, rounds: Int, largestValue: Int, processes: Int, crashes: Int, crashBatchSize: Int,
            modelSteps: Int, modelRuns: Int, generated: Int
        ) {
            (self.threads, self.rounds, self.largestValue) = (threads, rounds, largestValue)
            (self.processes, self.crashes, self.crashBatchSize) = (processes, crashes, crashBatchSize)
            (self.modelSteps, self.modelRuns, self.generated) = (modelSteps, modelRuns, generated)
        }

        /// The default: a few seconds per provider.
        public static let standard = Stress(
            threads: 6, rounds: 24, largestValue: 1 << 20, processes: 3, crashes: 6, crashBatchSize: 301,
            modelSteps: 120, modelRuns: 2, generated: 48)

        /// Longer runs for authors hunting rare races: four times the rounds, kills and steps,
        /// more threads and processes, values up to 4 MiB.
        public static let thorough = Stress.standard.scaled(by: 4)

        /// This stress with rounds, kills, model steps and generated inputs multiplied by
        /// `factor`, and threads, processes and the largest value grown more gently.
        public func scaled(by factor: Int) -> Stress {
            let factor = max(1, factor)
            let gentle = factor == 1 ? 1 : 1 + factor / 2
            return Stress(
                threads: threads * gentle, rounds: rounds * factor, largestValue: largestValue * (factor > 1 ? 4 : 1),
                processes: processes * gentle, crashes: crashes * factor, crashBatchSize: crashBatchSize,
                modelSteps: modelSteps * factor, modelRuns: modelRuns * factor, generated: generated * factor)
        }
    }
}

/// A small, fast, deterministic random number generator (SplitMix64): the same seed gives the
/// same keys, values and operations in every process, so a printed seed reproduces a run.
struct ConformanceRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A generator for one part of the run, so that parts stay reproducible on their own.
    init(seed: UInt64, stream: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in stream.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        state = seed ^ hash
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}
