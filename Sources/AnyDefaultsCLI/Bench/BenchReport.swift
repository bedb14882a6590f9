import AnyDefaults
import Foundation

/// What `bench` measured: the baseline and each store, plain and cached, with ratios.
struct BenchReport: Codable {
    /// One store, plain or cached.
    struct Result: Codable {
        var store: String
        var cached: Bool
        var costs: BenchCosts
        /// Each cost divided by the baseline's: below 1 is faster than `UserDefaults`.
        var ratios: BenchCosts
    }

    /// A store to measure: how it is shown, and where it is.
    struct Subject {
        var label: String
        var configuration: StoreConfiguration
    }

    var keys: Int
    var operations: Int
    var unit = "nanoseconds per operation (batch: per batch of all the keys)"
    var baselineName = "Foundation UserDefaults (a scratch suite; synchronize() once per run of writes)"
    var baseline: BenchCosts
    var results: [Result]

    /// Measures the baseline (on a suite `scratch` removes), then each subject with `cache=off`
    /// and `cache=on`, showing progress on `progress`. Each subject must be empty when it starts;
    /// each run removes the keys it wrote, and only those, so it ends as it was, plus whatever
    /// other processes wrote meanwhile.
    static func measure(
        _ subjects: [Subject], with runner: BenchRunner, scratch: ScratchArea, progress: ProgressLine
    ) throws -> BenchReport {
        let total = 1 + subjects.count * 2
        func status(_ step: Int, _ label: String) -> (String) -> Void {
            { operation in progress.show("[\(step)/\(total)] \(label): \(operation)") }
        }
        let baseline = try runner.measure(UserDefaultsBenchTarget(scratch: scratch), status: status(1, "UserDefaults"))
        var results: [Result] = []
        for (index, subject) in subjects.enumerated() {
            // Checked once, before the first run: keys another process writes meanwhile are its
            // own business, and are left alone (each run removes only what it wrote).
            var plain = subject.configuration
            plain.cache = false
            guard try StoreOptions.open(plain).keys().isEmpty else {
                throw CommandFailure(
                    ExitStatus.usage,
                    "bench writes and removes keys, so it needs an empty store: \(subject.label) is not empty")
            }
            for cached in [false, true] {
                var configuration = subject.configuration
                configuration.cache = cached
                let provider = try StoreOptions.open(configuration)
                let step = 2 + index * 2 + (cached ? 1 : 0)
                let costs = try runner.measure(
                    ProviderBenchTarget(provider: provider), status: status(step, subject.label + (cached ? " cached" : "")))
                results.append(Result(store: subject.label, cached: cached, costs: costs, ratios: costs.ratios(to: baseline)))
            }
        }
        progress.clear()
        return BenchReport(keys: runner.keyCount, operations: runner.operationCount, baseline: baseline, results: results)
    }

    /// The side-by-side table: one row per operation, plain and cached; one column per store,
    /// the baseline first; each cell the cost and its ratio to the baseline.
    func table(indent: Int = 0) -> String {
        let stores = results.reduce(into: [String]()) { if !$0.contains($1.store) { $0.append($1.store) } }
        var rows: [[String]] = []
        for (name, cost) in BenchCosts.operations {
            for cached in [false, true] {
                var row = [cached ? "" : name, cached ? "cached" : "plain", Self.duration(baseline[keyPath: cost])]
                for store in stores {
                    guard let result = results.first(where: { $0.store == store && $0.cached == cached }) else {
                        row.append("")
                        continue
                    }
                    row.append("\(Self.duration(result.costs[keyPath: cost])) (\(Self.ratio(result.ratios[keyPath: cost])))")
                }
                rows.append(row)
            }
        }
        return TextTable(["operation", "", "UserDefaults"] + stores, rows: rows).render(indent: indent)
    }

    /// The report as JSON.
    func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return ((try? encoder.encode(self)) ?? Data("{}".utf8)) + Data("\n".utf8)
    }

    /// A duration in nanoseconds, with a unit that keeps it short.
    static func duration(_ nanoseconds: Double) -> String {
        switch nanoseconds {
        case ..<1_000: String(format: "%.0f ns", nanoseconds)
        case ..<1_000_000: String(format: "%.1f µs", nanoseconds / 1_000)
        case ..<1_000_000_000: String(format: "%.1f ms", nanoseconds / 1_000_000)
        default: String(format: "%.2f s", nanoseconds / 1_000_000_000)
        }
    }

    /// A ratio with two significant digits or so: 0.0027×, 0.35×, 2.4×, 180×.
    static func ratio(_ value: Double) -> String {
        switch value {
        case ..<1: String(format: "%.2g×", value)
        case ..<10: String(format: "%.1f×", value)
        default: String(format: "%.0f×", value)
        }
    }
}
