@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

import AnyDefaultsPlatform

/// Several real processes on one LMDB store, all watching it, commit batches, grow the map from
/// 64 KiB, read, and are killed with SIGKILL and restarted at random moments
/// (`TestChild stress`). No process may die of anything but the kills, fail, or lose an
/// acknowledged write.
///
/// `ANYDEFAULTS_LMDB_STRESS_SECONDS` sets the length (default 20 s); `ANYDEFAULTS_LMDB_STRESS_SEED`
/// the seed of the kill schedule (default: random, printed).
@Suite(.ownThreads) struct LMDBStressTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seconds = environment["ANYDEFAULTS_LMDB_STRESS_SECONDS"].flatMap { Double($0) } ?? 20

    @Test func processesGrowingTheMapWhileWatchingAndKilledNeverCrashOrLoseAWrite() throws {
        let seed = Self.environment["ANYDEFAULTS_LMDB_STRESS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("LMDB stress: seed \(seed), \(Self.seconds) s")
        var random = TestSupport.SeededGenerator(seed: seed)
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let acknowledged = Acknowledgements()
            var failures: [String] = []
            var children = try (0..<4).map { id in try StressChild(path: path, id: id, generation: 1, acknowledged: acknowledged) }
            var kills = 0
            let end = ContinuousClock.now + .seconds(Self.seconds)
            while ContinuousClock.now < end {
                usleep(UInt32.random(in: 100_000...600_000, using: &random))
                // Whoever died on its own crashed or failed.
                for (id, child) in children.enumerated() where !child.process.isRunning {
                    failures.append(child.outcome(killed: false))
                    children[id] = try StressChild(path: path, id: id, generation: acknowledged.next(id), acknowledged: acknowledged)
                }
                let id = Int.random(in: 0..<children.count, using: &random)
                children[id].stop()
                kills += 1
                if let failure = children[id].failure(killed: true) { failures.append(failure) }
                children[id] = try StressChild(path: path, id: id, generation: acknowledged.next(id), acknowledged: acknowledged)
                if failures.count > 5 { break }
            }
            for child in children {
                let crashed = !child.process.isRunning
                child.stop()
                if crashed {
                    failures.append(child.outcome(killed: false))
                } else if let failure = child.failure(killed: true) {
                    failures.append(failure)
                }
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int) ?? 0
            print("LMDB stress: \(kills) kills, \(acknowledged.total) acknowledged batches, \(failures.count) failures, data file \(size >> 20) MiB")
            #expect(failures.isEmpty, "\(failures.prefix(5).joined(separator: "\n"))")

            // Every acknowledged batch is there, whole: each writer's four keys hold one generation,
            // its last acknowledged one or a later one (the batch in flight at a kill).
            let store = try LMDBProvider(path: path)
            defer { store.close() }
            for id in 0..<4 {
                for thread in 0..<2 {
                    let generations = try ["a", "b", "c", "d"].map { key -> Int64? in
                        guard case .dictionary(let record)? = try store.value(forKey: "p\(id)-t\(thread)-\(key)"), case .int(let generation)? = record["generation"]
                        else { return nil }
                        return generation
                    }
                    let last = acknowledged.last(id, thread)
                    #expect(Set(generations).count == 1, "p\(id)-t\(thread): a batch is torn: \(generations)")
                    if let last { #expect((generations.first ?? nil).map { $0 >= last } == true, "p\(id)-t\(thread): lost \(last)") }
                }
            }
            #expect(acknowledged.total > 0)
        }
    }
}

/// The acknowledged generations of every writer thread of every process.
final class Acknowledgements: Sendable {
    private let last = Mutex<[Int: [Int: Int64]]>([:])
    private let count = Atomic<Int>(0)

    func record(_ id: Int, _ thread: Int, _ generation: Int64) {
        count.add(1, ordering: .relaxed)
        last.withLock { $0[id, default: [:]][thread] = max($0[id]?[thread] ?? 0, generation) }
    }

    func last(_ id: Int, _ thread: Int) -> Int64? { last.withLock { $0[id]?[thread] } }

    /// The first generation for a new incarnation of process `id`: above every one before.
    func next(_ id: Int) -> Int64 { last.withLock { ($0[id]?.values.max() ?? 0) + 2 } }

    var total: Int { count.load(ordering: .relaxed) }
}

/// One `TestChild stress` process, whose output is read as it comes.
final class StressChild: Sendable {
    let id: Int
    let process: Process
    private let lines = Mutex<[String]>([])
    private let drained = DispatchSemaphore(value: 0)

    init(path: String, id: Int, generation: Int64, acknowledged: Acknowledgements) throws {
        self.id = id
        let (process, output, error) = try ChildProcess.start("TestChild", ["stress", "lmdb:" + path + "?mapsize=64KiB&durability=nosync", String(id), String(generation)])
        self.process = process
        DispatchQueue.global().async { [self] in
            var pending = Data()
            let reader = output.fileHandleForReading
            while case let chunk = reader.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    let fields = line.split(separator: " ")
                    if fields.count == 3, fields[0] == "ack", let thread = Int(fields[1]), let generation = Int64(fields[2]) {
                        acknowledged.record(id, thread, generation)
                    } else if line != "ready" {
                        lines.withLock { $0.append(line) }
                    }
                }
            }
            let errors = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if !errors.isEmpty { lines.withLock { $0.append(errors) } }
            drained.signal()
        }
    }

    /// Kills the process with SIGKILL (if it still runs) and waits until its output is read.
    func stop() {
        if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        drained.wait()
        drained.signal()
    }

    /// What went wrong, if anything, for a process that was killed (`killed`) or ended on its own.
    func failure(killed: Bool) -> String? {
        let output = lines.withLock { $0 }
        let signaled = process.terminationReason == .uncaughtSignal
        if killed, signaled, process.terminationStatus == SIGKILL, output.isEmpty { return nil }
        return outcome(killed: killed)
    }

    func outcome(killed: Bool) -> String {
        stop()
        let how = process.terminationReason == .uncaughtSignal
            ? "died of signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
        return "process \(id) \(how)\(killed ? " (killed with SIGKILL by the test)" : ""): "
            + lines.withLock { $0 }.joined(separator: " | ")
    }
}
