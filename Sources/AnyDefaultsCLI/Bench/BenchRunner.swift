import AnyDefaults
import Foundation

/// The costs `bench` reports for one target, in nanoseconds: per read, per write, per skipped
/// write (writing the value already stored), and per batch of all the keys.
struct BenchCosts: Codable {
    var read: Double
    var write: Double
    var skippedWrite: Double
    var batch: Double

    /// The operations, in table order, with their names.
    static var operations: [(name: String, cost: KeyPath<BenchCosts, Double>)] {
        [("read", \.read), ("write", \.write), ("skipped write", \.skippedWrite), ("batch", \.batch)]
    }

    /// Each cost divided by the baseline's.
    func ratios(to baseline: BenchCosts) -> BenchCosts {
        BenchCosts(
            read: read / baseline.read, write: write / baseline.write,
            skippedWrite: skippedWrite / baseline.skippedWrite, batch: batch / baseline.batch)
    }
}

/// Runs the measurements of `bench` (and of the tour's comparison) on one target at a time.
struct BenchRunner {
    /// How many keys the store holds while measured, and how many a batch writes.
    var keyCount: Int
    /// How many reads, writes and skipped writes each measurement makes.
    var operationCount: Int
    /// How many batches are timed.
    var batchCount = 3

    /// Measures `target`, calling `status` before each step, and removes what it wrote (also when
    /// it fails or is interrupted): its own keys, while they hold what it wrote, and nothing else.
    func measure(_ target: some BenchTarget, status: (String) -> Void) throws -> BenchCosts {
        let keys = (0..<keyCount).map { "bench.key.\($0)" }
        // The last value written to each key; nil for one not written (yet).
        var current = [String?](repeating: nil, count: keyCount)
        func written() -> [String: String] {
            Dictionary(uniqueKeysWithValues: zip(keys, current).compactMap { key, value in value.map { (key, $0) } })
        }
        let costs: BenchCosts
        do {
            costs = try measure(target, keys: keys, current: &current, status: status)
        } catch {
            try? target.clear(written())
            throw error
        }
        try target.clear(written())
        return costs
    }

    private func measure(
        _ target: some BenchTarget, keys: [String], current: inout [String?], status: (String) -> Void
    ) throws -> BenchCosts {
        // Keys visited in a scattered but repeatable order.
        let order = (0..<operationCount).map { ($0 &* 7919) % keyCount }

        status("batch")
        let batch = try time(batchCount) { round in
            let values = (0..<keyCount).map { "batch \(round) value \($0)" }
            try target.writeBatch(Array(zip(keys, values)).map { (key: $0.0, value: $0.1) })
            current = values
        }
        status("read")
        let read = try time(operationCount) { try target.read(keys[order[$0]]) }
        status("write")
        let write = try time(operationCount, then: target.finishWrites) { step in
            let index = order[step]
            let value = "written value \(step)"
            try target.write(value, forKey: keys[index])
            current[index] = value
        }
        status("skipped write")
        let skipped = try time(operationCount, then: target.finishWrites) { step in
            try target.write(current[order[step]] ?? "", forKey: keys[order[step]])
        }
        return BenchCosts(read: read, write: write, skippedWrite: skipped, batch: batch)
    }

    /// The mean time of `body` over `count` runs, in nanoseconds, with `then` included once.
    private func time(_ count: Int, then finish: () throws -> Void = {}, _ body: (Int) throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for step in 0..<count {
                try ScratchArea.checkInterruption()
                try body(step)
            }
            try finish()
        }
        return elapsed.inSeconds * 1e9 / Double(count)
    }
}
