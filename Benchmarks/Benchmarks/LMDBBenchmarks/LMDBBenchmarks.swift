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
    }
}
