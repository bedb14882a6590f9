import AnyDefaults
import Foundation
import TestSupport
import Testing

/// `watch` in one process sees the writes of other `anydefaults` processes.
@Suite(.ownThreads) struct WatchTests {
    /// Writes `ready` from other processes until the watcher prints it, so that what follows
    /// happens while it watches.
    static func waitUntilWatching(_ watcher: RunningCLI, _ cli: CLI, store: String) throws -> Bool {
        for attempt in 0..<50 {
            try cli.succeed(["--store", store, "write", "ready", "\(attempt)", "--type", "int"])
            if watcher.wait(timeout: .milliseconds(200), until: { $0.contains { $0.hasPrefix("ready\t") } }) { return true }
        }
        return false
    }

    /// Every persistent backend on Linux reports other processes' changes, so watch prints the
    /// provider's events.
    @Test(arguments: ["json", "userdefaults", "sqlite", "lmdb"])
    func watchPrintsOneLinePerChangeFromOtherProcessesUntilInterrupted(_ scheme: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = scheme == "json" ? cli.json() : scheme == "userdefaults" ? cli.suite() : "\(scheme):" + cli.path("store.\(scheme)")
            // watch reads an existing store only (it never creates one).
            try cli.succeed(["--store", store, "write", "created", "1"])
            let watcher = try cli.start(["--store", store, "watch", "ready", "k"])
            #expect(try Self.waitUntilWatching(watcher, cli, store: store))
            try cli.succeed(["--store", store, "write", "other", "not watched"])
            // One change at a time: a file-watching backend reports the difference between the
            // states it reads, so changes quicker than that could merge.
            let steps: [(arguments: [String], line: String)] = [
                (["write", "k", "1", "--type", "int"], "k\t1"),
                (["write", "k", #"{"list": [1, "a b"], "when": {"$date": "2026-11-21T09:30:00Z"}}"#, "--type", "json"],
                 "k\t" + #"{"list":[1,"a b"],"when":{"$date":"2026-11-21T09:30:00Z"}}"#),
                (["delete", "k"], "k\t(removed)"),
            ]
            var expected: [String] = []
            for step in steps {
                try cli.succeed(["--store", store] + step.arguments)
                expected.append(step.line)
                #expect(watcher.wait { $0.filter { !$0.hasPrefix("ready\t") } == expected }, "\(watcher.lines)")
            }
            kill(watcher.process.processIdentifier, SIGINT)
            let errors = watcher.finish()
            #expect(watcher.process.terminationReason == .exit)
            #expect(watcher.process.terminationStatus == 0)
            #expect(errors.isEmpty, "\(errors)")
            #expect(watcher.lines.filter { !$0.hasPrefix("ready\t") } == expected)
        }
    }

    /// The multi-client demonstration of Docs/Backends.md: processes as machines sharing one
    /// PostgreSQL store (the shared test cluster); a write in one shows in the two watching.
    @Test func severalProcessesShareAPostgreSQLStore() throws {
        let cluster = try PostgreSQLCluster.shared()
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cluster.storeString(namespace: "cli-demo-\(UUID().uuidString.prefix(8))")
            let machines = try (0..<2).map { _ in try cli.start(["--store", store, "watch"]) }
            for machine in machines { #expect(try Self.waitUntilWatching(machine, cli, store: store)) }
            try cli.succeed(["--store", store, "write", "feature.newCart", "true", "--type", "bool"])
            try cli.succeed(["--store", store, "write", "limits.items", "20", "--type", "int"])
            for machine in machines {
                #expect(machine.wait { $0.filter { !$0.hasPrefix("ready\t") } == ["feature.newCart\ttrue", "limits.items\t20"] }, "\(machine.lines)")
                kill(machine.process.processIdentifier, SIGINT)
                #expect(machine.finish().isEmpty)
            }
        }
    }

    /// The store's directory removed and made again while watch runs (a restore, a cleanup
    /// script): watch reports the old store's keys removed, then follows the store now at the
    /// path, instead of going silent.
    @Test(arguments: ["json", "userdefaults", "sqlite", "lmdb"])
    func watchFollowsTheStoreWhenItsDirectoryIsRemovedAndMadeAgain(_ scheme: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            // A suite lives in the preferences directory under XDG_CONFIG_HOME ("config").
            let (store, removed) = switch scheme {
            case "json": (cli.json("d/store.json"), "d")
            case "userdefaults": (cli.suite(), "config")
            default: ("\(scheme):" + cli.path("d/store.\(scheme)"), "d")
            }
            try FileManager.default.createDirectory(atPath: cli.path("d"), withIntermediateDirectories: true)
            try cli.succeed(["--store", store, "write", "k", "1", "--type", "int"])
            let watcher = try cli.start(["--store", store, "watch", "ready", "k"])
            #expect(try Self.waitUntilWatching(watcher, cli, store: store))
            try FileManager.default.removeItem(atPath: cli.path(removed))
            try FileManager.default.createDirectory(atPath: cli.path(removed), withIntermediateDirectories: true)
            try cli.succeed(["--store", store, "write", "k", "2", "--type", "int"])
            // The removal shows unless the new store was there before the old one's loss was noticed.
            let ofK = { (lines: [String]) in lines.filter { $0.hasPrefix("k\t") && $0 != "k\t(removed)" } }
            #expect(watcher.wait { ofK($0) == ["k\t2"] }, "\(watcher.lines)")
            try cli.succeed(["--store", store, "write", "k", "3", "--type", "int"])
            #expect(watcher.wait { ofK($0) == ["k\t2", "k\t3"] }, "\(watcher.lines)")
            #expect(watcher.lines.filter { $0 == "k\t(removed)" }.count <= 1, "\(watcher.lines)")
            kill(watcher.process.processIdentifier, SIGINT)
            let errors = watcher.finish()
            #expect(watcher.process.terminationStatus == 0)
            // Every built-in provider follows the store at the path itself; watch does not
            // reopen it (it would print each change twice).
            #expect(!errors.contains("removed or replaced"), "\(errors)")
        }
    }

    @Test func watchStopsAfterCountChanges() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = cli.json()
            // watch reads an existing store only (it never creates one).
            try cli.succeed(["--store", store, "write", "tick", "start"])
            let watcher = try cli.start(["--store", store, "watch", "--count", "2"])
            for attempt in 0..<50 where watcher.process.isRunning {
                try cli.succeed(["--store", store, "write", "tick", "\(attempt)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
            _ = watcher.finish()
            #expect(watcher.process.terminationReason == .exit && watcher.process.terminationStatus == 0)
            #expect(watcher.lines.count == 2)
            #expect(watcher.lines.allSatisfy { $0.hasPrefix("tick\t\"") })
        }
    }

    @Test func aBackendWithoutExternalChangesSaysSo() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let watcher = try cli.start(["--store", "memory:", "watch"])
            // The note comes once the interrupt is handled; a signal before that would end the
            // process another way.
            #expect(watcher.waitForError { $0.contains("not reported by this backend") }, "\(watcher.standardError)")
            kill(watcher.process.processIdentifier, SIGINT)
            let errors = watcher.finish()
            #expect(watcher.process.terminationStatus == 0)
            #expect(errors.contains("not reported by this backend"))
        }
    }
}
