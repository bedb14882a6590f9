import AnyDefaults
import Foundation
import TestSupport
import Testing

/// I/O faults through the real executable, in the spirit of SQLite's I/O error tests: each
/// command on each persistent backend is run once with the fault shim counting the file-system
/// calls it makes on the sandbox's files (open, mkdir, write, sync, rename, unlink, truncate,
/// lock; see `Tests/FaultInjection/faultshim.c`), then again with each of those calls failing in
/// turn (with EIO or ENOSPC, that call only or every call from it on). After each run: the store
/// opens and holds exactly its old or its new state (the destination of a migration and the
/// output of an export too), a command that exited 0 left the new state, no temporary file is
/// left, and the next write works.
///
/// By default each command runs a fixed sample (every rename and unlink, one call of each other
/// kind, chosen by a printed seed);
/// `ANYDEFAULTS_TEETH=1` runs every call with all four variants.
@Suite(.ownThreads, .enabled(if: FaultShim.isSupported, "the fault shim interposes glibc through LD_PRELOAD: Linux only"))
struct FaultInjectionTests {
    static let teeth: Bool = {
        let value = ProcessInfo.processInfo.environment["ANYDEFAULTS_TEETH"] ?? ""
        return !value.isEmpty && value != "0"
    }()
    static let seed: UInt64 = ProcessInfo.processInfo.environment["ANYDEFAULTS_FAULT_SEED"].flatMap { UInt64($0) } ?? 29

    enum Operation: String, CaseIterable, Sendable {
        case write, delete, batch, recovery, migrate, move, export
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var kind: StoreKind
        var operation: Operation
        var testDescription: String { "\(operation.rawValue) on \(kind.scheme):" }

        /// The store's location: path-based stores in `s/` of the sandbox.
        func location(_ cli: CLI, _ name: String = "store") -> String {
            kind.scheme == "userdefaults" ? kind.location(cli, name) : kind.location(cli, "s/" + name)
        }

        func store(_ cli: CLI, _ name: String = "store") -> String { kind.scheme + ":" + location(cli, name) }

        /// The store string the command uses (with recovery on for `recovery` where a backend
        /// has an option for it: JSON and UserDefaults move a damaged file aside; SQLite and LMDB
        /// recover from a crashed writer on every open).
        func commandStore(_ cli: CLI) -> String {
            guard operation == .recovery, !dataFileName.isEmpty else { return store(cli) }
            return store(cli) + (kind.scheme == "json" ? "?recovery=moveaside" : "?recover=on")
        }

        var dataFileName: String {
            switch kind.scheme {
            case "json": "store.json"
            case "userdefaults": "com.example.cli-tests.store.plist"
            default: ""
            }
        }

        /// The directory that holds the store's data file (where a damaged file is set aside).
        func dataDirectory(_ cli: CLI) -> String { kind.scheme == "userdefaults" ? cli.path("config") : cli.path("s") }

        static let damaged = Data("{ \"ui.theme\": damaged\u{1}".utf8)
        static let imported: [String: DefaultsValue] = ["b.one": .int(1), "b.two": .string("x"), "ui.theme": .string("blue")]
        static let destination: [String: DefaultsValue] = ["dest.only": .int(1), "ui.theme": .string("light")]
        static let oldOutput = Data("old export\n".utf8)

        /// Makes the old state.
        func prepare(_ cli: CLI) throws {
            for folder in ["s", "out", "in"] {
                try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true)
            }
            if operation == .recovery, !dataFileName.isEmpty {
                try Self.damaged.write(to: URL(fileURLWithPath: dataDirectory(cli) + "/" + dataFileName))
            } else {
                try cli.fill(store(cli), with: sampleValues)
            }
            if operation == .recovery, dataFileName.isEmpty { try leaveACrashedWriter(cli) }
            switch operation {
            case .batch: try ExactJSON.data(from: Self.imported).write(to: URL(fileURLWithPath: cli.path("in/import.json")))
            case .migrate, .move: try cli.fill(store(cli, "dest"), with: Self.destination)
            case .export: try Self.oldOutput.write(to: URL(fileURLWithPath: cli.path("out/export.json")))
            default: break
            }
        }

        /// Leaves the SQLite or LMDB store as a process killed while it had it open leaves it:
        /// `watch` holds the store open while a write commits (SQLite keeps that commit in the
        /// `-wal`, which the killed `watch` never checkpoints; LMDB keeps the dead reader's slot),
        /// then it is killed, and the next open recovers.
        func leaveACrashedWriter(_ cli: CLI) throws {
            let watcher = try cli.start(["--store", store(cli), "watch"])
            defer {
                kill(watcher.process.processIdentifier, SIGKILL)
                _ = watcher.finish()
            }
            let dataFile = kind.scheme == "sqlite" ? location(cli) : location(cli) + "/data.mdb"
            let deadline = ContinuousClock.now + .seconds(20)
            func holdsTheStore() -> Bool {
                let descriptors = "/proc/\(watcher.process.processIdentifier)/fd"  // portability-check: allowed, the fault shim, and so this test, runs on Linux only
                return ((try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []).contains {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + $0)) == dataFile
                }
            }
            while !holdsTheStore(), ContinuousClock.now < deadline { usleep(10_000) }
            try #require(holdsTheStore(), "watch did not open the store")
            try cli.succeed(["--store", store(cli), "write", "crash.pending", "committed"])
            if kind.scheme == "sqlite" {
                try #require(FileManager.default.fileExists(atPath: dataFile + "-wal"), "the commit is not left in the -wal")
            }
        }

        func arguments(_ cli: CLI) -> [String] {
            switch operation {
            case .write, .recovery: ["--store", commandStore(cli), "write", "w.new", "fresh"]
            case .delete: ["--store", store(cli), "delete", "ui.theme", "launchCount"]
            case .batch: ["--store", store(cli), "import", cli.path("in/import.json")]
            case .migrate: ["--store", store(cli), "migrate", "--to", store(cli, "dest")]
            case .move: ["--store", store(cli), "migrate", "--move", "--to", store(cli, "dest")]
            case .export: ["--store", store(cli), "export", "--output", cli.path("out/export.json")]
            }
        }

        /// The store the next write goes to.
        func nextStore(_ cli: CLI) -> String { operation == .migrate || operation == .move ? store(cli, "dest") : commandStore(cli) }

        /// What a run left, as text to compare: the store's export (or the status it failed
        /// with), the destination's, the output file, and whether a damaged file is kept.
        func observe(_ cli: CLI) throws -> [String: String] {
            func export(_ store: String) throws -> String {
                let result = try cli.run(["--store", store, "export"])
                return result.status == 0 ? result.standardOutput : "export failed with \(result.status)"
            }
            var state = ["store": try export(store(cli))]
            switch operation {
            case .migrate, .move: state["destination"] = try export(store(cli, "dest"))
            case .export:
                state["output"] = (FileManager.default.contents(atPath: cli.path("out/export.json"))).map { String(decoding: $0, as: UTF8.self) } ?? "missing"
            case .recovery where !dataFileName.isEmpty:
                let directory = dataDirectory(cli)
                let kept = try FileManager.default.contentsOfDirectory(atPath: directory).contains {
                    FileManager.default.contents(atPath: directory + "/" + $0) == Self.damaged
                }
                state["damaged file kept"] = String(kept)
            default: break
            }
            return state
        }
    }

    static let scenarios: [Scenario] = StoreKind.persistent.flatMap { kind in
        Operation.allCases.map { operation in
            Scenario(kind: kind, operation: operation)
        }
    }

    /// One fault: which call fails, how, and for how long.
    struct Fault: CustomStringConvertible {
        var call: FaultShim.Call
        var failure: FaultShim.Failure
        var persistent: Bool
        var description: String { "\(call) failing with \(failure)\(persistent ? " from then on" : " once")" }
    }

    /// The faults to inject, given the calls of an undisturbed run: all of them with every
    /// variant (teeth), or every rename and unlink and one call of each other kind, each with a
    /// seeded variant.
    static func faults(for calls: [FaultShim.Call], seed: UInt64) -> [Fault] {
        if teeth {
            return calls.flatMap { call in
                FaultShim.Failure.allCases.flatMap { failure in [false, true].map { Fault(call: call, failure: failure, persistent: $0) } }
            }
        }
        var generator = SeededGenerator(seed: seed)
        var kinds: [String] = []
        for call in calls where !kinds.contains(call.kind) { kinds.append(call.kind) }
        // Renames and removals are few and each is a step of its own (the commit, a file set
        // aside, a cleanup): all of them; of the other kinds, one.
        return kinds.flatMap { kind in
            let candidates = calls.filter { $0.kind == kind }
            let chosen = ["rename", "unlink"].contains(kind) ? candidates : [candidates[Int(generator.next() % UInt64(candidates.count))]]
            return chosen.map { Fault(call: $0, failure: generator.next() % 2 == 0 ? .eio : .enospc, persistent: generator.next() % 2 == 0) }
        }
    }

    static let sandboxFolders = ["s", "config", "out", "in", "tmp", "data"]

    /// Copies the sandbox's folders aside (the pristine old state) or back.
    static func copyFolders(_ cli: CLI, from: (String) -> String, to: (String) -> String) throws {
        for folder in sandboxFolders {
            if FileManager.default.fileExists(atPath: to(folder)) { try FileManager.default.removeItem(atPath: to(folder)) }
            if FileManager.default.fileExists(atPath: from(folder)) { try FileManager.default.copyItem(atPath: from(folder), toPath: to(folder)) }
        }
    }

    /// Temporary files anywhere in the sandbox but the pristine copy.
    static func temporaryFiles(_ cli: CLI) -> [String] {
        let root = cli.directory.path
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        return enumerator.compactMap { $0 as? String }.filter { !$0.hasPrefix("pristine/") && $0.contains(".tmp-") }.map { root + "/" + $0 }
    }

    @Test(arguments: scenarios)
    func everyFailedCallLeavesTheOldOrTheNewState(_ scenario: Scenario) async throws {
        let seed = Self.seed
        let report = try await BlockingWork.run { try Self.sweep(scenario, seed: seed) }
        print("FaultInjectionTests \(scenario.testDescription): \(report)")
    }

    static func sweep(_ scenario: Scenario, seed: UInt64) throws -> String {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let shim = try FaultShim.build(in: directory.path)
            let log = directory.path("fault.log")
            try scenario.prepare(cli)
            try copyFolders(cli, from: { cli.path($0) }, to: { cli.path("pristine/" + $0) })
            let restore = { try copyFolders(cli, from: { cli.path("pristine/" + $0) }, to: { cli.path($0) }) }
            let old = try scenario.observe(cli)

            // An undisturbed run, counting the calls (on the old state: reading it may have
            // recovered or checkpointed the store).
            try restore()
            let arguments = scenario.arguments(cli)
            let counted = try cli.run(arguments, environment: shim.environment(watching: directory.path, log: log))
            try #require(counted.status == 0, "\(arguments): \(counted.standardError)")
            let calls = FaultShim.calls(inLog: log)
            try #require(!calls.isEmpty, "the shim counted no call: is it preloaded?")
            let new = try scenario.observe(cli)
            try #require(new != old, "the command changed nothing")
            var allowed = [old, new]
            if scenario.operation == .move {
                // Two stores cannot commit together: a move that fails between its copy and its
                // removal leaves the keys in both (nothing lost; run it again). The source's new
                // state with the destination's old one would be a loss.
                allowed.append(["store": old["store"] ?? "", "destination": new["destination"] ?? ""])
            }
            if scenario.operation == .recovery, !scenario.dataFileName.isEmpty {
                // Opening with recovery sets the damaged file aside and starts empty, a state of
                // its own (as SQLite's rollback of a hot journal is), before the write.
                try restore()
                _ = try cli.run(["--store", scenario.commandStore(cli), "keys"])
                allowed.append(try scenario.observe(cli))
            }

            let faults = faults(for: calls, seed: seed)
            var failedRuns = 0
            var unfired = 0
            for fault in faults {
                try restore()
                try? FileManager.default.removeItem(atPath: log)
                // Bounded: a command that never ends after a fault is a failure (and is killed).
                let result = try cli.runBounded(arguments, environment: shim.environment(
                    watching: directory.path, log: log, failing: fault.call.number, with: fault.failure, persistent: fault.persistent),
                    timeout: .seconds(120))
                let context = "\(scenario.testDescription) seed \(seed), \(fault): exit \(result.status), \(result.standardError)"
                let fired = FaultShim.calls(inLog: log).contains { $0.failed }
                if result.status != 0 { failedRuns += 1 }
                #expect(!result.wasSignaled, "crashed: \(context)")
                #expect([0, 66, 73, 74, 75, 77].contains(result.status), "unexpected status: \(context)")
                #expect(result.status == 0 || !result.standardError.isEmpty, "failed silently: \(context)")
                let state = try scenario.observe(cli)
                #expect(allowed.contains(state), "neither the old nor the new state (\(state)): \(context)")
                if result.status == 0 {
                    #expect(state == new, "exited 0 but the new state is not there (\(state)): \(context)")
                }
                // A temporary file whose removal was the failed call may stay (it is removed when
                // certainly abandoned, see TemporaryFileTests); no other may.
                let unremovable = Set(FaultShim.calls(inLog: log).filter { $0.failed && $0.kind == "unlink" }.map(\.target))
                let leftovers = temporaryFiles(cli).filter { !unremovable.contains($0) }
                #expect(leftovers.isEmpty, "temporary files left (\(leftovers)): \(context)")
                let next = try cli.run(["--store", scenario.nextStore(cli), "write", "fault.next", "works"])
                #expect(next.status == 0, "the next write failed: \(context); then: \(next.standardError)")
                let read = try cli.run(["--store", scenario.nextStore(cli), "read", "fault.next"])
                #expect(read.status == 0 && read.standardOutput.contains("works"), "the next write is not visible: \(context)")
                if !fired { unfired += 1 }
            }
            return "\(calls.count) calls counted, \(faults.count) faults injected (seed \(seed)\(teeth ? ", teeth" : "")), \(failedRuns) runs failed, \(unfired) faults never reached"
        }
    }
}
