// LMDBProvider beside the least a C program must do for the same work on a store of the same
// shape: a point read with mdb_get in a renewed (mdb_txn_reset / mdb_txn_renew) read transaction,
// and one write (mdb_txn_begin, mdb_put, mdb_txn_commit) at the same sync setting.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target LMDBBenchmarks
import AnyDefaultsCore
import AnyDefaultsLMDB
import Benchmark
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(2))
    // Made when the benchmarks run (not when the tool only lists them), and removed afterwards.
    let slot = LMDBFixtureSlot()
    Benchmark.setup = { try slot.create() }
    Benchmark.teardown = { slot.remove() }

    // MARK: Point read of an int (uncached)

    Benchmark("Read: raw C mdb_get in a renewed read transaction", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let raw = try slot.fixtures().raw[.synced]
        for _ in benchmark.scaledIterations {
            blackHole(raw?.read(LMDBFixtures.readKey))
        }
    }
    Benchmark("Read: LMDBProvider.value(forKey:)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let provider = try slot.fixtures().providers[.synced]
        for _ in benchmark.scaledIterations {
            blackHole(try provider?.value(forKey: LMDBFixtures.readKey))
        }
    }

    // MARK: One write of a new value (a value equal to the stored one would not be written)

    for durability in [LMDBProvider.Options.Durability.synced, .noSync] {
        let name = durability == .synced ? "synced" : "MDB_NOSYNC"
        Benchmark("Write \(name): raw C put and commit") { benchmark in
            let fixtures = try slot.fixtures()
            let raw = fixtures.raw[durability]
            for _ in benchmark.scaledIterations {
                raw?.write(key: "k", value: fixtures.nextNumber())
            }
        }
        Benchmark("Write \(name): LMDBProvider.setValue") { benchmark in
            let fixtures = try slot.fixtures()
            let provider = fixtures.providers[durability]
            for _ in benchmark.scaledIterations {
                try provider?.setValue(.int(fixtures.nextNumber()), forKey: "k")
            }
        }
        // While another process watches the store, each write also logs the key it changed.
        Benchmark("Write \(name): LMDBProvider.setValue, another process watching") { benchmark in
            let fixtures = try slot.fixtures()
            let provider = fixtures.watched[durability]
            for _ in benchmark.scaledIterations {
                try provider?.setValue(.int(fixtures.nextNumber()), forKey: "k")
            }
        }
    }

    // MARK: The same comparisons, paired
    // On a shared machine the load swings between two benchmarks run one after the other. Here
    // both sides run back to back, alternating which goes first, and each pair records its time
    // ratio ×1000; the ratio table reads the median ("paired" goals). Reads are timed in batches,
    // as one read is too short for the clock.

    let pairedRatio = BenchmarkMetric.custom("paired ratio ×1000", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark("Read: LMDBProvider vs raw C, paired", configuration: .init(metrics: [.throughput, pairedRatio])) { benchmark in
        let fixtures = try slot.fixtures()
        let raw = fixtures.raw[.synced]
        let provider = fixtures.providers[.synced]
        let batch = 1000
        for _ in benchmark.scaledIterations {
            let rawSide = {
                let start = ContinuousClock.now
                for _ in 0..<batch { blackHole(raw?.read(LMDBFixtures.readKey)) }
                return ContinuousClock.now - start
            }
            let providerSide = {
                let start = ContinuousClock.now
                for _ in 0..<batch { blackHole(try provider?.value(forKey: LMDBFixtures.readKey)) }
                return ContinuousClock.now - start
            }
            let providerFirst = fixtures.nextNumber().isMultiple(of: 2)
            let ratio = try pairedRatioPerMille(providerFirst: providerFirst, rawSide, providerSide)
            benchmark.measurement(pairedRatio, ratio)
        }
    }
    Benchmark("Write synced: LMDBProvider vs raw C, paired", configuration: .init(metrics: [.throughput, pairedRatio])) { benchmark in
        let fixtures = try slot.fixtures()
        let raw = fixtures.raw[.synced]
        let provider = fixtures.providers[.synced]
        for _ in benchmark.scaledIterations {
            let rawSide = {
                let start = ContinuousClock.now
                raw?.write(key: "k", value: fixtures.nextNumber())
                return ContinuousClock.now - start
            }
            let providerSide = {
                let start = ContinuousClock.now
                try provider?.setValue(.int(fixtures.nextNumber()), forKey: "k")
                return ContinuousClock.now - start
            }
            let providerFirst = fixtures.nextNumber().isMultiple(of: 2)
            let ratio = try pairedRatioPerMille(providerFirst: providerFirst, rawSide, providerSide)
            benchmark.measurement(pairedRatio, ratio)
        }
    }
}

/// Runs both sides, in the order given, and returns the provider's time over the raw side's, ×1000.
func pairedRatioPerMille(
    providerFirst: Bool, _ raw: () -> Duration, _ provider: () throws -> Duration
) rethrows -> Int {
    var providerTime = Duration.zero
    if providerFirst { providerTime = try provider() }
    let rawTime = raw()
    if !providerFirst { providerTime = try provider() }
    return Int((providerTime / rawTime * 1000).rounded())
}
