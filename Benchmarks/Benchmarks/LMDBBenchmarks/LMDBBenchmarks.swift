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
    let fixtures: LMDBFixtures
    do {
        fixtures = try LMDBFixtures()
    } catch {
        print("LMDBBenchmarks: could not set up: \(error)")
        return
    }
    Benchmark.teardown = { fixtures.remove() }

    // MARK: Point read of an int (uncached)

    Benchmark("Read: raw C mdb_get in a renewed read transaction", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(fixtures.raw[.synced]?.read(LMDBFixtures.readKey))
        }
    }
    Benchmark("Read: LMDBProvider.value(forKey:)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try fixtures.providers[.synced]?.value(forKey: LMDBFixtures.readKey))
        }
    }

    // MARK: One write of a new value (a value equal to the stored one would not be written)

    for durability in [LMDBProvider.Options.Durability.synced, .noSync] {
        let name = durability == .synced ? "synced" : "MDB_NOSYNC"
        let raw = fixtures.raw[durability]
        let provider = fixtures.providers[durability]
        Benchmark("Write \(name): raw C put and commit") { benchmark in
            for _ in benchmark.scaledIterations {
                raw?.write(key: "k", value: fixtures.nextNumber())
            }
        }
        Benchmark("Write \(name): LMDBProvider.setValue") { benchmark in
            for _ in benchmark.scaledIterations {
                try provider?.setValue(.int(fixtures.nextNumber()), forKey: "k")
            }
        }
    }
}
