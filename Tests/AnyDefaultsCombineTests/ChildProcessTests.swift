import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// What uses process-wide state runs in `TestChild combine-…`, a process of its own, with
/// `Defaults.standard` opened from ANYDEFAULTS_STORE: migrations over two launches of a program,
/// and the process-wide mock flag.
@Suite struct ChildProcessTests {
    static func run(_ arguments: [String], store: String) throws -> String {
        let result = try ChildProcess.run("TestChild", arguments, environment: ["ANYDEFAULTS_STORE": store])
        #expect(result.status == 0, "\(result.standardError)")
        return result.standardOutput
    }

    /// The documented `Service` migrates "count" to "index" at its first launch; at the next one
    /// it does nothing, though an older version of the program wrote "count" again meanwhile.
    @Test(arguments: Backend.persistent)
    func aMigrationHappensOnceOverTwoLaunches(_ backend: Backend) throws {
        try backend.withLocation { configuration in
            do {
                let defaults = try backend.open(configuration)
                defaults.set(3.0, forKey: "count")  // what the old version stored
            }
            #expect(try Self.run(["combine-migrate"], store: configuration) == "index=2 count=none\n")
            do {
                let defaults = try backend.open(configuration)
                #expect(defaults.bool(forKey: "AnyDefaults.migrated:count>index"))
                defaults.set(9.0, forKey: "count")  // the old version, run again
            }
            #expect(try Self.run(["combine-migrate"], store: configuration) == "index=2 count=9.0\n")
        }
    }

    /// With the process-wide flag set, properties on the standard store never open it; cleared,
    /// new properties use it.
    @Test func theProcessWideMockFlagKeepsPropertiesOffTheStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings.sqlite")
            let output = try Self.run(["combine-mock", path], store: "sqlite:" + path)
            #expect(output == "published=0.5,0.9,0.5 nickname=ada index=0\nopened=false\nstored=0.3\n")
            let defaults = try Defaults(url: "sqlite:" + path)
            #expect(defaults.keys() == ["volume"])
        }
    }
}
