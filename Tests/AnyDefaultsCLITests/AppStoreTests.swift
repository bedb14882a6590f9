import AnyDefaults
import Foundation
import TestSupport
import Testing

/// `--app NAME` opens the store `Defaults.standard` of the app NAME writes to; run as the built
/// executable, with a real program (`TestChild standard-write`) as the app.
@Suite(.ownThreads) struct AppStoreTests {
    /// The app: a program of this package that writes through `Defaults.standard`.
    static let app = "TestChild"

    /// Runs the app, writing `value` under `key` through its `Defaults.standard`, in the sandbox
    /// with `environment` added.
    static func appWrites(_ key: String, _ value: String, _ cli: CLI, environment: [String: String] = [:]) throws {
        let result = try ChildProcess.run(app, ["standard-write", key, value], environment: cli.environment.merging(environment) { $1 })
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "ok\n")
    }

    /// Nothing configured: the app's standard suite (its process name on Linux), a property list
    /// in the preferences directory; `--app` reads it, before or after the command, and writes
    /// to it so that the app reads the change.
    @Test func appOpensTheSuiteOfTheAppsStandardStore() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try Self.appWrites("greeting", "hello", cli)
            #expect(FileManager.default.fileExists(atPath: cli.path("config/\(Self.app).plist")))
            #expect(try cli.succeed(["--app", Self.app, "read", "greeting"]).standardOutput == "\"hello\"\n")
            #expect(try cli.succeed(["keys", "--app", Self.app]).standardOutput == "greeting\n")
            // The same store as its suite, by name.
            #expect(try cli.contents(of: "userdefaults:" + Self.app) == ["greeting": .string("hello")])
            try cli.succeed(["--app", Self.app, "write", "volume", "-int", "7"])
            #expect(try cli.contents(of: "userdefaults:" + Self.app)["volume"] == .int(7))
            // The tool's own default store was never involved.
            #expect(!FileManager.default.fileExists(atPath: cli.path("data/anydefaults")))
        }
    }

    /// With `ANYDEFAULTS_STORE` or a configuration file (set for the app as for the tool), the
    /// app's store is that one, as `Defaults.standard` resolves it.
    @Test func appFollowsTheConfigurationTheAppWouldSee() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let variable = ["ANYDEFAULTS_STORE": "sqlite:" + cli.path("app.sqlite")]
            try Self.appWrites("k", "from the variable", cli, environment: variable)
            #expect(try cli.run(["--app", Self.app, "read", "k"], environment: variable).standardOutput == "\"from the variable\"\n")
            let file = cli.path("config.json")
            try Data(#"{"store": "json:app.json"}"#.utf8).write(to: URL(fileURLWithPath: file))
            let configured = ["ANYDEFAULTS_CONFIG": file]
            try Self.appWrites("k", "from the file", cli, environment: configured)
            #expect(try cli.run(["--app", Self.app, "read", "k"], environment: configured).standardOutput == "\"from the file\"\n")
            #expect(try cli.contents(of: cli.json("app.json")) == ["k": .string("from the file")])
            // Neither wrote to the app's suite.
            #expect(!FileManager.default.fileExists(atPath: cli.path("config/\(Self.app).plist")))
        }
    }

    /// An app that never wrote has no store: reading says so, naming the app, and creates nothing;
    /// `--app` with `--store`, or an empty name, is a usage error; a name that cannot be a suite
    /// is refused in the tool's words.
    @Test func appRefusals() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let absent = try cli.run(["--app", "com.example.never-ran", "keys"])
            #expect(absent.status == 66)
            #expect(absent.standardError == "anydefaults: no such store: userdefaults:com.example.never-ran (the standard store of the app com.example.never-ran)\n")
            #expect(!FileManager.default.fileExists(atPath: cli.path("config/com.example.never-ran.plist")))
            for arguments in [["--app", "a", "--store", "memory:", "keys"], ["keys", "--app", ""]] {
                let result = try cli.run(arguments)
                #expect(result.status == 64, "\(arguments): \(result.standardError)")
            }
            for name in ["a/b", "NSGlobalDomain", String(repeating: "n", count: 250)] {
                for command in [["read", "k"], ["write", "k", "v"]] {
                    let result = try cli.run(["--app", name] + command)
                    #expect(result.status == 64, "\(name) \(command): \(result.standardError)")
                    #expect(result.standardError.contains("`userdefaults:` without a suite"), "\(result.standardError)")
                    #expect(!result.standardError.contains("Pass nil"), "\(result.standardError)")
                }
            }
        }
    }

    /// `--help` says where each default lives: the tool's own store, and an app's.
    @Test func helpSaysWhereEachDefaultLives() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            // Lines are wrapped to the terminal's width: compare words.
            let help = try cli.succeed(["--help"]).standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for words in ["defaults.sqlite", "Defaults.standard", "$XDG_CONFIG_HOME/NAME.plist", "--app NAME", "ANYDEFAULTS_STORE"] {
                #expect(help.contains(words), "\(words)")
            }
        }
    }
}
