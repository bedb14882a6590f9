import AnyDefaultsCore
import Foundation

extension DefaultsConformanceSuite {
    /// Crash atomicity (for providers that claim ``DefaultsCapabilities/atomicBatch`` and
    /// ``DefaultsCapabilities/persistent``, with a ``ChildProcess``): a child process applies large
    /// batches in a loop and is killed with SIGKILL at a random moment inside one, several times
    /// on the same storage (every other time through `apply(_:ifUnchanged:)`). After every kill the store opens, every batch is all or nothing (all
    /// its keys hold one generation, and only that generation's marker exists), and no batch the
    /// child acknowledged is lost.
    func crashAtomicityChecks() throws -> ConformanceReport {
        try groupOnStorage(.crashAtomicity) { checker, storage in
            guard let child else { return }
            var random = ConformanceRandom(seed: options.seed, stream: "crash")
            let keys = options.stress.crashBatchSize
            // Large enough (about 1 MiB a batch) that writing a batch takes a good part of its time.
            let bytes = 3_000
            var generation = 1
            for cycle in 0..<options.stress.crashes {
                guard let connection = startChild(child, storage, checker) else { return }
                var lastBegun = generation - 1
                var lastAcknowledged = generation - 1
                var acknowledged: [ContinuousClock.Instant] = []
                do {
                    // Every other cycle through apply(_:ifUnchanged:), whose batch must be as atomic.
                    let mode = cycle % 2 == 1 ? "conditional" : "plain"
                    try connection.send("crash", ChildWire.text("ca."), "\(keys)", "\(bytes)", "\(generation)", mode)
                    // Learn how long a batch takes, then kill at a random moment inside one.
                    while acknowledged.count < 3 {
                        let line = try connection.receive()
                        if line.first == "error" { throw ChildFailure(description: ChildWire.errorText(line)) }
                        guard line.count >= 2, let number = Int(line[1]) else { continue }
                        if line[0] == "begin" { lastBegun = number }
                        if line[0] == "ack" { lastAcknowledged = number; acknowledged.append(.now) }
                    }
                    let batch = (acknowledged[2] - acknowledged[0]) / 2
                    while true {
                        let line = try connection.receive()
                        guard line.count >= 2, let number = Int(line[1]) else { continue }
                        if line[0] == "ack" { lastAcknowledged = number }
                        if line[0] == "begin" {
                            lastBegun = number
                            break
                        }
                    }
                    let delay = batch * Double.random(in: 0..<1, using: &random)
                    Thread.sleep(forTimeInterval: delay.seconds)
                } catch {
                    checker.fail(.suiteChildProcess, "cycle \(cycle + 1): the child applies batches", expected: "begin and ack lines", actual: "\(error)")
                    connection.terminate()
                    return
                }
                connection.kill()
                // What it said before it died.
                while let line = try? connection.receive(timeout: .milliseconds(50)), line.count >= 2, let number = Int(line[1]) {
                    if line[0] == "begin" { lastBegun = number }
                    if line[0] == "ack" { lastAcknowledged = number }
                }
                guard let found = verifyCrashState(checker, storage, cycle: cycle, keys: keys, bytes: bytes, acknowledged: lastAcknowledged, begun: lastBegun)
                else { return }
                generation = found + 1
            }
        }
    }

    /// Opens the storage after a kill and checks that it holds exactly one generation of the
    /// crash batches, at least the last acknowledged one; returns it.
    private func verifyCrashState(
        _ checker: ConformanceChecker, _ storage: ConformanceStorage, cycle: Int, keys: Int, bytes: Int, acknowledged: Int, begun: Int
    ) -> Int? {
        let when = "after kill \(cycle + 1) (last batch begun \(begun), acknowledged \(acknowledged))"
        let opened = checker.attempt(.crashAtomicityOpens, "open the storage \(when)") { try openWatched(storage, checker) }
        guard let provider = opened else { return nil }
        guard let all = checker.attempt(.crashAtomicityOpens, "allValues() \(when)", { try provider.allValues() }) else { return nil }
        var generations: [Int: Int] = [:]
        var foreign: [String] = []
        for index in 0..<keys {
            let key = "ca.k.\(index)"
            if let generation = CrashBatch.generation(of: all[key], bytes: bytes) { generations[generation, default: 0] += 1 } else { foreign.append(key) }
        }
        let markers = all.keys.filter { $0.hasPrefix("ca.m.") }
        let generation = generations.keys.max() ?? 0
        let whole = foreign.isEmpty && generations.count == 1 && markers == ["ca.m.\(generation)"] && all.count == keys + 1
        checker.check(
            .crashAtomicityAllOrNothing, whole, "every batch is all or nothing \(when)",
            expected: "all \(keys) keys of one generation and its marker",
            actual: "generations \(generations.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value) keys" }), \(foreign.count) keys missing or damaged, markers \(ConformanceText.keys(markers)), \(all.count) keys in all")
        checker.check(
            .crashAtomicityAcknowledged, generation >= acknowledged && generation <= begun, "no acknowledged batch is lost \(when)",
            expected: "generation \(acknowledged)\(begun > acknowledged ? " or \(begun)" : "")", actual: "generation \(generation)")
        return whole ? generation : (generations.isEmpty ? nil : max(generation, begun))
    }
}
