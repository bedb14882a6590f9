import AnyDefaults
import AnyDefaultsTesting
import Foundation
import TestSupport
import Testing

/// `bench`, `verify` and `tour`: they run, report, and leave no scratch storage behind.
@Suite(.ownThreads) struct BenchVerifyTourTests {
    /// What is left in the sandbox's temporary and config directories.
    static func leftovers(_ cli: CLI) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cli.path("tmp"))
            + FileManager.default.contentsOfDirectory(atPath: cli.path("config"))
    }

    @Test func benchPrintsASideBySideTableWithTheBaselineAndRatios() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let result = try cli.succeed(["bench", "--stores", "memory:,json:relative.json", "--keys", "5", "--ops", "20"])
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            let header = try #require(lines.first { $0.hasPrefix("operation") })
            #expect(header.contains("UserDefaults") && header.contains("memory:") && header.contains("json:relative.json"))
            for operation in ["read", "write", "skipped write", "batch"] {
                let row = try #require(lines.first { $0.hasPrefix(operation + " ") }, "\(operation)")
                #expect(row.contains("plain"))
                #expect(row.components(separatedBy: "×)").count == 3, "two ratios in \(row)")
            }
            #expect(lines.filter { $0.contains("cached") }.count == 4)
            // Not a terminal: no progress.
            #expect(result.standardError.isEmpty)
            #expect(try Self.leftovers(cli) == [])
            // A relative path is placed in the scratch directory, not here.
            #expect(!FileManager.default.fileExists(atPath: cli.path("relative.json")))
        }
    }

    @Test func benchJSONHasEveryCostAndRatio() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let result = try cli.succeed(["bench", "--stores", "memory:,userdefaults:", "--keys", "3", "--ops", "10", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            #expect(object["keys"] as? Int == 3)
            #expect(object["operations"] as? Int == 10)
            let baseline = try #require(object["baseline"] as? [String: Double])
            #expect(Set(baseline.keys) == ["read", "write", "skippedWrite", "batch"])
            let results = try #require(object["results"] as? [[String: Any]])
            #expect(results.map { "\($0["store"] as? String ?? "") \($0["cached"] as? Bool ?? false)" } == ["memory: false", "memory: true", "userdefaults: false", "userdefaults: true"])
            for entry in results {
                let costs = try #require(entry["costs"] as? [String: Double])
                let ratios = try #require(entry["ratios"] as? [String: Double])
                for (name, cost) in costs {
                    #expect(cost > 0)
                    #expect(abs(ratios[name, default: 0] - cost / baseline[name, default: 1]) <= 1e-9 * max(1, ratios[name, default: 0]))
                }
            }
            #expect(try Self.leftovers(cli) == [])
        }
    }

    @Test(arguments: [["bench", "--keys", "1000", "--ops", "100000"], ["verify", "userdefaults:"]])
    func anInterruptedRunRemovesItsScratchStorage(_ arguments: [String]) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let running = try cli.start(arguments)
            // Interrupt once it has made its scratch storage (and a little more).
            let deadline = ContinuousClock.now + .seconds(10)
            while try Self.leftovers(cli).isEmpty, running.process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            usleep(300_000)
            #expect(running.process.isRunning, "it ended before it could be interrupted")
            kill(running.process.processIdentifier, SIGINT)
            // The tool waits up to ten seconds for the step under way (a conformance group cannot
            // stop half-way) before it removes the scratch storage itself: wait longer than that.
            _ = running.finish(timeout: .seconds(30))
            #expect(running.process.terminationStatus == 128 + SIGINT)
            let left = try Self.leftovers(cli)
            #expect(left == [], "\(left)")
        }
    }

    /// A second signal stops the command at once, without waiting for the step under way (a
    /// conformance group of `verify` takes seconds and cannot stop half-way). What a write under
    /// way at that moment recreates may be left (in the sandbox here); the first signal alone
    /// leaves nothing (above).
    @Test func aSecondSignalStopsAtOnce() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let running = try cli.start(["verify", "userdefaults:"])
            let deadline = ContinuousClock.now + .seconds(10)
            while try Self.leftovers(cli).isEmpty, running.process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            usleep(300_000)
            #expect(running.process.isRunning, "it ended before it could be interrupted")
            kill(running.process.processIdentifier, SIGINT)
            // Two signals before the first is handled would be taken as one.
            #expect(running.waitForError { $0.contains("interrupted: removing") }, "\(running.standardError)")
            let started = ContinuousClock.now
            kill(running.process.processIdentifier, SIGINT)
            _ = running.finish(timeout: .seconds(30))
            // Less than the ten seconds the first signal alone waits for the step under way.
            #expect(ContinuousClock.now - started < .seconds(9))
            #expect(running.process.terminationStatus == 128 + SIGINT)
        }
    }

    @Test func benchRefusesAStoreThatIsNotEmpty() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.fill(cli.json(), with: ["mine": .string("precious")])
            let result = try cli.run(["bench", "--stores", cli.json(), "--keys", "2", "--ops", "2"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("not empty"))
            #expect(try cli.contents(of: cli.json()) == ["mine": .string("precious")])
        }
    }

    @Test(arguments: ["memory:", "json:any/path.json?recovery=moveaside", "userdefaults:?cache=off", "sqlite:x.db", "lmdb:dir?mapsize=1MiB"])
    func verifyRunsTheConformanceSuiteOnScratchStorage(_ store: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let result = try cli.succeed(["verify", store])
            #expect(result.standardOutput.hasPrefix("Verifying"))
            #expect(result.standardOutput.contains("✔ roundTrips"))
            #expect(!result.standardOutput.contains("✘"))
            // Groups the backend does not claim are shown as skipped, never as passed; the
            // others ran, those needing other processes with `anydefaults` as the child.
            let skipped = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("  – ") }
            let lastLine = result.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
            if store == "memory:" {
                #expect(skipped.count == 5)
                #expect(lastLine == "All \(DefaultsConformanceSuite.Group.allCases.count - 5) groups that ran passed; 5 skipped.")
            } else {
                #expect(result.standardOutput.contains("✔ multiProcess"))
                #expect(skipped.isEmpty || lastLine.hasSuffix("skipped."))
            }
            let left = try Self.leftovers(cli)
            #expect(left == [], "left behind: \(left)")
        }
    }

    @Test func theTourRunsOverEveryBackendAndCleansUp() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let result = try cli.succeed(["tour"])
            let output = result.standardOutput
            for entry in ProviderRegistry.standard.registered {
                #expect(output.contains("\(entry.scheme):"))
            }
            let exact = output.components(separatedBy: "9 of 9 exact").count - 1
            // Stores on a server (postgres:) are named in the tour but need a server to be written.
            #expect(exact == ProviderRegistry.standard.registered.filter { !$0.needsServer }.count)
            #expect(!output.contains("DIFFERENT"))
            #expect(output.contains("this process heard: ui.theme = \"solarized\""))
            #expect(output.contains("hits: 999, misses: 1"))
            #expect(result.standardError.isEmpty)
            #expect(try Self.leftovers(cli) == [])
        }
    }
}
