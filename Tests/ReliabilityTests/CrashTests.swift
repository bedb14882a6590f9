import AnyDefaults
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// A writer is killed with SIGKILL at random moments; after each kill a fresh process opens the
/// store and checks that every acknowledged write is there, nothing is torn, and the write in
/// flight is all or nothing (see `TestChild check`).
///
/// A few runs per backend here; `scripts/crash-test N` runs N per backend (the published figure),
/// through the environment variables below:
/// - `ANYDEFAULTS_CRASH_RUNS`: kills per backend (default 6);
/// - `ANYDEFAULTS_CRASH_STORES`: comma-separated schemes to run (default: every persistent one);
/// - `ANYDEFAULTS_CRASH_SEED`: the workload's seed (default: random, printed);
/// - `ANYDEFAULTS_CRASH_REPORT`: a file to append the summary line to.
@Suite(.ownThreads) struct CrashTests {
    static let environment = ProcessInfo.processInfo.environment
    static let runs = environment["ANYDEFAULTS_CRASH_RUNS"].flatMap { Int($0) } ?? 6
    static let selected = environment["ANYDEFAULTS_CRASH_STORES"].map { Set($0.split(separator: ",").map(String.init)) }

    /// What one series of kills found.
    struct Summary: CustomStringConvertible {
        var scheme: String
        var seed: UInt64
        var runs = 0
        var acknowledged = 0
        var applied = 0
        var notApplied = 0
        var neutral = 0
        var failures: [String] = []

        var description: String {
            "crash-test \(scheme): \(runs) runs (SIGKILL), \(failures.count) failures, \(acknowledged) acknowledged writes, "
                + "write in flight at the kill: \(applied) applied, \(notApplied) not applied, \(neutral) neither; seed \(seed)"
        }
    }

    /// Every persistent backend with its default options, and the levels that promise to survive
    /// a crash of the process without a sync: a scheme, or a scheme and its options (a journal in
    /// front of each store kept in a file, `journal=on`, among them).
    static let variants = TestStore.persistentSchemes + [
        "lmdb?durability=nosync", "lmdb?durability=mapped", "json?journal=on", "sqlite?journal=on", "lmdb?journal=on",
        // A journal of 4 KiB fills every few writes: the kills land in flushes too.
        "sqlite?journal=on&journalsize=4096",
    ]

    /// On every variant, or those ANYDEFAULTS_CRASH_STORES selects (scripts/crash-test).
    @Test(arguments: CrashTests.variants.filter { CrashTests.selected?.contains($0) ?? true })
    func killedWritersLoseNothingAcknowledged(variant: String) throws {
        let seed = Self.environment["ANYDEFAULTS_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        let parts = variant.split(separator: "?", maxSplits: 1).map(String.init)
        let summary = try withTestStore(parts[0], forChildren: true) { store, directory in
            try Self.run(store, options: parts.count > 1 ? parts[1] : nil, in: directory, seed: seed, runs: Self.runs)
        }
        print(summary)
        if let report = Self.environment["ANYDEFAULTS_CRASH_REPORT"], let handle = FileHandle(forWritingAtPath: report) {
            handle.seekToEndOfFile()
            handle.write(Data((summary.description + "\n").utf8))
            try? handle.close()
        }
        #expect(summary.failures.isEmpty, "\(summary.failures.prefix(10).joined(separator: "\n"))")
        #expect(summary.runs == Self.runs)
    }

    /// Kills `runs` writers on `store`, checking the store after each.
    static func run(_ store: TestStore, options: String? = nil, in directory: TemporaryDirectory, seed: UInt64, runs: Int) throws -> Summary {
        var summary = Summary(scheme: store.scheme + (options.map { "?" + $0 } ?? ""), seed: seed)
        let text = store.store + (options.map { "?" + $0 } ?? "")
        let stateFile = directory.path("crash-state.json")
        let output = directory.path("writer.out")
        let errors = directory.path("writer.err")
        // Go on from a previous series on the same store, if any.
        var base = lastBase(stateFile)
        for run in 1...runs {
            // Kill at any moment: a third of the runs while the writer starts and opens the store.
            let delay = run % 3 == 0 ? UInt32.random(in: 0...40_000) : UInt32.random(in: 20_000...300_000)
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            let writer = Process()
            writer.executableURL = try ChildProcess.executable("TestChild")
            writer.arguments = ["workload", text, String(seed), String(base + 1)]
            writer.environment = ProcessInfo.processInfo.environment.merging(store.environment) { $1 }
            writer.standardOutput = FileHandle(forWritingAtPath: output)
            writer.standardError = FileHandle(forWritingAtPath: errors)
            writer.standardInput = FileHandle.nullDevice
            try writer.run()
            usleep(delay)
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            summary.runs += 1
            if writer.terminationReason != .uncaughtSignal {
                let message = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                summary.failures.append("run \(run): the writer stopped by itself (status \(writer.terminationStatus)): \(message)")
                break
            }
            let acknowledgements = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
                .split(separator: "\n").compactMap { $0.hasPrefix("ack ") ? Int64($0.dropFirst(4)) : nil }
            let acknowledged = acknowledgements.last ?? base
            summary.acknowledged += acknowledgements.count

            let check = try ChildProcess.run(
                "TestChild", ["check", text, String(seed), stateFile, String(acknowledged)],
                environment: store.environment)
            guard check.status == 0, !check.wasSignaled else {
                summary.failures.append(
                    "run \(run) (acknowledged up to \(acknowledged)): check failed with status \(check.status): "
                        + check.standardOutput + check.standardError)
                break
            }
            if check.standardOutput.contains("in-flight=applied") {
                summary.applied += 1
            } else if check.standardOutput.contains("in-flight=not-applied") {
                summary.notApplied += 1
            } else {
                summary.neutral += 1
            }
            base = acknowledged + 1
        }
        return summary
    }

    /// The check catches what it is there to catch: a value changed behind the writer's back, and
    /// acknowledged writes that are gone.
    @Test func theCheckFailsOnATornValueAndOnLostWrites() throws {
        try withTestStore("json", forChildren: true) { store, directory in
            let seed: UInt64 = 7
            let stateFile = directory.path("crash-state.json")
            let provider = try store.open()
            var values: [String: DefaultsValue] = [:]
            for _ in 0..<10 where values.count < 8 {
                #expect(try Self.run(store, in: directory, seed: seed, runs: 1).failures.isEmpty)
                values = try provider.allValues()
            }
            try #require(values.count >= 8)
            let acknowledged = String(Self.lastBase(stateFile))

            // A torn value: one byte of a payload changed.
            let key = try #require(values.keys.sorted().first)
            guard case .dictionary(var fields) = values[key], case .data(var payload)? = fields["payload"] else {
                Issue.record("not a workload value")
                return
            }
            payload.append(1)
            fields["payload"] = .data(payload)
            try provider.setValue(.dictionary(fields), forKey: key)
            let torn = try ChildProcess.run(
                "TestChild", ["check", store.store, String(seed), stateFile, acknowledged], environment: store.environment)
            #expect(torn.status == 1)
            #expect(torn.standardOutput.contains("torn or foreign value"))

            // Acknowledged writes lost: every key gone.
            try provider.removeAll()
            let lost = try ChildProcess.run(
                "TestChild", ["check", store.store, String(seed), stateFile, acknowledged], environment: store.environment)
            #expect(lost.status == 1)
            #expect(lost.standardOutput.contains("an acknowledged write is missing"))
        }
    }

    /// The base generation recorded in a state file.
    static func lastBase(_ stateFile: String) -> Int64 {
        guard let data = FileManager.default.contents(atPath: stateFile),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let base = object["base"] as? Int
        else { return 0 }
        return Int64(base)
    }
}
