import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Errors that come from `ANYDEFAULTS_STORE` or the configuration file say so; run as the built
/// executable.
@Suite(.ownThreads) struct ConfigurationSourceTests {
    /// `memory:` is empty in each process: reading it is no error.
    @Test func memoryIsAlwaysThere() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            #expect(try cli.succeed(["--store", "memory:", "keys"]).standardOutput.isEmpty)
            #expect(try cli.succeed(["--store", "memory:", "read"]).standardOutput == "{}\n")
        }
    }

    /// A bad store string or option in `ANYDEFAULTS_STORE` or in the configuration file is
    /// reported as coming from there by every command that opens the store; the same string
    /// given with --store is not.
    @Test func configurationErrorsNameTheirSource() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.succeed(["--store", cli.json("import.json"), "write", "k", "v"])
            // The store exists, so that reading commands reach the option checks made on opening.
            try cli.succeed(["--store", "sqlite:" + cli.path("s.sqlite"), "write", "k", "v"])
            let commands: [[String]] = [
                ["read", "k"], ["write", "k", "v"], ["delete", "k"], ["keys"], ["export"], ["import", cli.path("import.json")],
                ["migrate", "--to", "memory:"], ["watch", "--count", "1"],
            ]
            let file = cli.path("config.json")
            let cases: [(store: String, says: String)] = [
                ("sqlit:" + cli.path("s.sqlite"), #"Unknown scheme "sqlit:". Did you mean sqlite:? Known: "#),
                ("sqlite:" + cli.path("s.sqlite") + "?durabilty=full", #"sqlite: has no option "durabilty""#),
                ("sqlite:" + cli.path("s.sqlite") + "?durability=fast", "durability"),
                ("json:", "json: needs a PATH"),
            ]
            for item in cases {
                try Data(ExactJSON.data(from: ["store": .string(item.store)])).write(to: URL(fileURLWithPath: file))
                for command in commands {
                    let sources: [(environment: [String: String], prefix: String)] = [
                        (["ANYDEFAULTS_STORE": item.store], "In ANYDEFAULTS_STORE: "),
                        (["ANYDEFAULTS_CONFIG": file], "In the configuration file \(file) (ANYDEFAULTS_CONFIG): "),
                    ]
                    for source in sources {
                        let result = try cli.runBounded(command, environment: source.environment, timeout: .seconds(20))
                        #expect(result.status == 64, "\(item.store) \(command): \(result.standardError)")
                        #expect(result.standardError.contains(source.prefix), "\(item.store) \(command): \(result.standardError)")
                        #expect(result.standardError.contains(item.says), "\(item.store) \(command): \(result.standardError)")
                    }
                    let direct = try cli.runBounded(["--store", item.store] + command, timeout: .seconds(20))
                    #expect(direct.status == 64, "\(item.store) \(command): \(direct.standardError)")
                    #expect(direct.standardError.contains(item.says), "\(item.store) \(command): \(direct.standardError)")
                    #expect(!direct.standardError.contains("ANYDEFAULTS"), "\(direct.standardError)")
                }
            }
            // A configuration file that cannot be read or parsed names the variable too.
            try Data("{".utf8).write(to: URL(fileURLWithPath: file))
            let broken = try cli.run(["keys"], environment: ["ANYDEFAULTS_CONFIG": file])
            #expect(broken.status == 64)
            #expect(broken.standardError.contains("In the configuration file \(file) (ANYDEFAULTS_CONFIG): The configuration file is not valid JSON."), "\(broken.standardError)")
        }
    }
}
