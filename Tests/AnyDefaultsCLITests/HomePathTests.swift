import AnyDefaults
import Foundation
import TestSupport
import Testing

/// `~` in file arguments, as the tool receives it when no shell expanded it (quoted, after `=`,
/// from a script): run as the built executable with `HOME` in the sandbox.
@Suite(.ownThreads) struct HomePathTests {
    @Test func aLeadingTildeInImportAndExportFilesIsTheHomeDirectory() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try FileManager.default.createDirectory(atPath: cli.path("home/sub"), withIntermediateDirectories: true)
            let home = ["HOME": cli.path("home")]
            let store = cli.json()
            try cli.fill(store, with: sampleValues)
            for (arguments, file) in [
                (["export", "--output", "~/out.json"], "home/out.json"),
                (["export", "--output=~/sub/out.json"], "home/sub/out.json"),
                (["export", "--format", "plist", "--output", "~/out.plist"], "home/out.plist"),
            ] {
                let result = try cli.run(["--store", store] + arguments, environment: home)
                #expect(result.status == 0, "\(arguments): \(result.standardError)")
                #expect(FileManager.default.fileExists(atPath: cli.path(file)), "\(arguments)")
            }
            #expect(!FileManager.default.fileExists(atPath: "~"), "a directory named ~ was created")
            for (index, file) in ["~/out.json", "~/sub/out.json", "~/out.plist"].enumerated() {
                let copy = cli.json("copy\(index).json")
                let result = try cli.run(["--store", copy, "import", file], environment: home)
                #expect(result.status == 0, "\(file): \(result.standardError)")
                #expect(try cli.contents(of: copy) == sampleValues, "\(file)")
            }
            // ~ alone is the home directory itself: a directory, not written over.
            let onHome = try cli.run(["--store", store, "export", "--output", "~"], environment: home)
            #expect(onHome.status == 73)
            #expect(onHome.standardError.contains("cannot write \(cli.path("home")): it is a directory"), "\(onHome.standardError)")
            // ~user is not expanded: the file named so does not exist.
            let other = try cli.run(["--store", store, "import", "~nobody/out.json"], environment: home)
            #expect(other.status == 66)
            #expect(other.standardError.contains("~nobody/out.json"), "\(other.standardError)")
        }
    }
}
