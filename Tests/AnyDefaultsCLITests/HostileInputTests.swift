import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Bad input of every kind: a documented exit status, a message on standard error that names
/// the problem (and the file), and never a crash.
@Suite(.ownThreads) struct HostileInputTests {
    /// One bad invocation: its arguments (`$DIR` is the sandbox), the status and a part of the message.
    struct Case: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var status: Int32
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }

        init(_ arguments: [String], _ status: Int32, _ message: String) {
            self.arguments = arguments
            self.status = status
            self.message = message
        }
    }

    static let cases: [Case] = [
        // Store strings and configuration.
        Case(["--store", "bogus:x", "keys"], 64, #"Unknown scheme "bogus:""#),
        Case(["--store", "", "keys"], 64, "empty"),
        Case(["--store", "no-colon", "keys"], 64, "names no scheme"),
        Case(["--store", "json:", "keys"], 64, "needs a PATH"),
        Case(["--store", "json:x.json?nope=1", "keys"], 64, #"has no option "nope""#),
        Case(["--store", "json:x.json?locktimeout=soon", "keys"], 64, "locktimeout"),
        Case(["--store", "json://host/x", "keys"], 64, "names a host"),
        Case(["--store", "json:%zz", "keys"], 64, "%"),
        Case(["--store", "memory:somewhere", "keys"], 64, "takes no location"),
        Case(["--store", "userdefaults:a/b", "keys"], 64, "suite name"),
        Case(["--store", "json:$DIR/a-directory", "keys"], 64, "$DIR/a-directory"),
        Case(["--store", "json:$DIR/damaged.json", "read", "k"], 74, "$DIR/damaged.json"),
        // Values.
        Case(["--store", "memory:", "write", "k", "12x", "--type", "int"], 64, "whole number"),
        Case(["--store", "memory:", "write", "k", "99999999999999999999", "--type", "int"], 64, "whole number"),
        Case(["--store", "memory:", "write", "k", "1e999", "--type", "double"], 64, "a number"),
        Case(["--store", "memory:", "write", "k", "maybe", "--type", "bool"], 64, "boolean"),
        Case(["--store", "memory:", "write", "k", "2026-13-45", "--type", "date"], 64, "ISO 8601"),
        Case(["--store", "memory:", "write", "k", "not base64!", "--type", "data"], 64, "base64"),
        Case(["--store", "memory:", "write", "k", "{", "--type", "json"], 64, "json"),
        Case(["--store", "memory:", "write", "k", "null", "--type", "json"], 64, "null"),
        Case(["--store", "memory:", "write", "k", String(repeating: "[", count: 100_000), "--type", "json"], 64, "nest"),
        Case(["--store", "memory:", "write", "k", "v", "--type", "yaml"], 64, "yaml"),
        // Input that cannot be an export is refused at its first byte, not read to an end that
        // never comes.
        Case(["--store", "memory:", "import", "/dev/zero"], 65, "does not start like one"),
        Case(["--store", "memory:", "import", "--format", "json", "/dev/zero"], 65, "not a valid json export"),
        Case(["--store", "memory:", "write", "", "v"], 64, "empty"),
        Case(["--store", "memory:", "write", "k"], 64, "<value>"),
        // Commands and options.
        Case(["frobnicate"], 64, "frobnicate"),
        Case(["--store", "memory:", "delete"], 64, "--all"),
        Case(["--store", "memory:", "delete", "k", "--all"], 64, "--all"),
        Case(["--store", "memory:", "read", "--raw"], 64, "--raw"),
        Case(["--store", "memory:", "watch", "--count", "0"], 64, "--count"),
        Case(["bench", "--keys", "0"], 64, "--keys"),
        Case(["bench", "--stores", ","], 64, "--stores"),
        Case(["bench", "--stores", "nope:"], 64, "Unknown scheme"),
        Case(["verify", "nope:"], 64, "Unknown scheme"),
        Case(["verify", "json:x.json?recovery=sometimes"], 64, "recovery"),
        Case(["--store", "memory:", "migrate", "--to", "bogus:"], 64, "Unknown scheme"),
        // Files.
        Case(["--store", "memory:", "import", "$DIR/missing.json"], 66, "$DIR/missing.json"),
        Case(["--store", "memory:", "import", "$DIR/a-directory"], 66, "$DIR/a-directory"),
        Case(["--store", "memory:", "import", "--format", "xml", "$DIR/damaged.json"], 64, "xml"),
        Case(["--store", "memory:", "export", "--output", "$DIR/a-directory"], 73, "$DIR/a-directory"),
        Case(["--store", "memory:", "export", "--output", "$DIR/missing-directory/x.json"], 73, "$DIR/missing-directory/x.json"),
        Case(["--store", "memory:", "export", "--output", "/proc/anydefaults-test.json"], 73, "/proc/anydefaults-test.json"),  // portability-check: allowed, a path that cannot be written on any system
    ]

    @Test(arguments: cases)
    func badInputGetsItsStatusAndAMessage(_ item: Case) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try FileManager.default.createDirectory(atPath: cli.path("a-directory"), withIntermediateDirectories: true)
            try Data("{\"k\": ".utf8).write(to: URL(fileURLWithPath: cli.path("damaged.json")))
            let arguments = item.arguments.map { $0.replacingOccurrences(of: "$DIR", with: directory.path) }
            let result = try cli.run(arguments)
            #expect(!result.wasSignaled)
            #expect(result.status == item.status, "\(result.standardError)")
            #expect(result.standardError.contains(item.message.replacingOccurrences(of: "$DIR", with: directory.path)), "\(result.standardError)")
            #expect(result.standardOutput.isEmpty)
            // A damaged store is left as it was.
            #expect(try Data(contentsOf: URL(fileURLWithPath: cli.path("damaged.json"))) == Data("{\"k\": ".utf8))
        }
    }

    @Test func storedValuesNeverAppearInMessages() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let result = try cli.run(["--store", "memory:", "write", "password", "hunter2-secret", "--type", "int"])
            #expect(result.status == 64)
            #expect(!result.standardError.contains("hunter2"))
        }
    }
}
