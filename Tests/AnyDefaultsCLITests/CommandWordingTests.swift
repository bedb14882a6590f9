import AnyDefaults
import Foundation
import TestSupport
import Testing

import AnyDefaultsPlatform

/// What the tool says matches what it does, in its own terms (store strings and options, not the
/// Swift API): `verify` takes its store as every command does, `watch --help` describes `watch`,
/// and backend messages that reach the tool name what a user of the tool can change.
@Suite(.ownThreads) struct CommandWordingTests {
    /// Help text with its line wrapping undone.
    static func help(_ cli: CLI, _ command: [String]) throws -> String {
        try cli.succeed(command + ["--help"]).standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// `verify` verifies the store named by STORE, by `--store` (before or after the command) or,
    /// without either, by `ANYDEFAULTS_STORE`; the report names that store's kind. Both STORE and
    /// a different `--store` is a usage error.
    @Test func verifyHonoursTheStoreOption() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let forms: [(arguments: [String], environment: [String: String])] = [
                (["verify", "memory:"], [:]), (["--store", "memory:", "verify"], [:]), (["verify", "--store", "memory:"], [:]),
                (["verify", "--store", "memory:", "memory:"], [:]), (["verify"], ["ANYDEFAULTS_STORE": "memory:"]),
            ]
            // The first line names the store verified; the run is then interrupted (it would take
            // a while, and what it checks is BenchVerifyTourTests' concern).
            for form in forms {
                let (process, output, _) = try ChildProcess.start("anydefaults", form.arguments, environment: cli.environment.merging(form.environment) { $1 })
                var first = Data()
                while !first.contains(UInt8(ascii: "\n")) {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    first += chunk
                }
                kill(process.processIdentifier, SIGINT)
                process.waitUntilExit()
                let line = String(decoding: first, as: UTF8.self)
                #expect(line.hasPrefix("Verifying memory:"), "\(form.arguments): \(line.prefix(80))")
                #expect([0, 130].contains(process.terminationStatus), "\(form.arguments)")
            }
            // --store is not ignored: a store the backend refuses is refused through it too.
            for arguments in [["verify", "--store", "json:x.json?recovery=sometimes"], ["--store", "nope:", "verify"]] {
                let result = try cli.run(arguments)
                #expect(result.status == 64, "\(arguments): \(result.standardError)")
            }
            let both = try cli.run(["verify", "memory:", "--store", "json:x.json"])
            #expect(both.status == 64)
            #expect(both.standardError.contains("Give the store once"), "\(both.standardError)")
        }
    }

    /// `watch --help` names the backends that report other processes' changes and says what
    /// happens elsewhere; the behaviour it describes is checked in `WatchTests` (each backend
    /// named reports changes from another process without a note) and `NoSuchStoreTests`.
    @Test func watchHelpDescribesWatch() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let help = try Self.help(cli, ["watch"])
            for words in [
                "json:, sqlite:, lmdb:, postgres:, and userdefaults: on Linux", "json:?watch=off", "four times a second",
                "memory: lives in one process only", "never creates one (status 66", "--count", "KEY<TAB>JSON",
            ] {
                #expect(help.contains(words), "\(words): \(help)")
            }
            #expect(!help.contains("externalChanges capability"), "API terms: \(help)")
            // json:?watch=off: the note and the polling the help promises.
            try cli.succeed(["--store", cli.json(), "write", "k", "1"])
            let watcher = try cli.start(["--store", cli.json() + "?watch=off", "watch", "--count", "1"])
            // A write made before the watcher has read the store is not a change to it: write
            // new values until one is reported.
            for attempt in 2..<50 where !watcher.wait(timeout: .milliseconds(600), until: { !$0.isEmpty }) {
                try cli.succeed(["--store", cli.json(), "write", "k", "\(attempt)"])
            }
            #expect(watcher.lines.count == 1 && watcher.lines[0].hasPrefix("k\t\""), "\(watcher.lines)")
            let errors = watcher.finish()
            #expect(errors.contains("reading the store four times a second"), "\(errors)")
        }
    }

    /// A suite name the backend refuses is explained with the store string (`userdefaults:`
    /// without a suite), never with the Swift API's "Pass nil".
    @Test func aRefusedSuiteNameIsExplainedInStoreStrings() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            for name in ["a/b", "..", "NSGlobalDomain", "NSArgumentDomain", String(repeating: "s", count: 250)] {
                for command in [["write", "k", "v"], ["keys"]] {
                    let result = try cli.run(["--store", "userdefaults:" + name] + command)
                    #expect(result.status == 64, "\(name) \(command): \(result.standardError)")
                    #expect(result.standardError.contains("`userdefaults:` without a suite"), "\(result.standardError)")
                    #expect(!result.standardError.contains("Pass nil"), "\(result.standardError)")
                }
            }
        }
    }

    /// LMDB's write lock held by another process beyond the lock timeout: `busy` (75), the message
    /// names the store-string option that sets the timeout, which the tool accepts; the value is
    /// unchanged.
    @Test func lmdbLockTimeoutIsAStoreOptionAndItsMessageSaysSo() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = cli.path("store.lmdb")
            try cli.succeed(["--store", "lmdb:" + path, "write", "k", "old"])
            let descriptor = open(path, O_RDONLY | O_DIRECTORY)
            #expect(descriptor >= 0)
            defer { close(descriptor) }
            #expect(flock(descriptor, LOCK_EX) == 0)
            for timeout in ["0", "1"] {
                let result = try cli.runBounded(["--store", "lmdb:\(path)?locktimeout=\(timeout)", "write", "k", "new"], timeout: .seconds(60))
                #expect(result.status == 75, "\(result.standardError)")
                #expect(result.standardError.contains("locktimeout=SECONDS in a store string"), "\(result.standardError)")
            }
            #expect(flock(descriptor, LOCK_UN) == 0)
            #expect(try cli.succeed(["--store", "lmdb:" + path, "read", "k"]).standardOutput == "\"old\"\n")
            let refused = try cli.run(["--store", "lmdb:\(path)?locktimeout=soon", "write", "k", "new"])
            #expect(refused.status == 64)
            #expect(refused.standardError.contains("locktimeout"), "\(refused.standardError)")
        }
    }
}
