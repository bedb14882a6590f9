import AnyDefaults
import Foundation
import Testing
import TestSupport

/// The SQLite and LMDB engines' safety through the real executable: files beside a store, files
/// replaced under a running store, locks held by a stopped process, links.
@Suite struct EngineSafetyTests {
    /// `read` on a SQLite store whose file is gone but whose `-wal` holds commits: an error, the
    /// log kept, no empty store created.
    @Test func readingAStoreWhoseFileIsGoneButWhoseLogHoldsCommitsFailsAndKeepsTheLog() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = cli.path("store.sqlite")
            let child = try ChildProcess.run("SQLiteTestChild", ["crash", path, "kept", "5"])
            #expect(child.wasSignaled)
            let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            try FileManager.default.removeItem(atPath: path)
            let result = try cli.run(["--store", "sqlite:" + path, "read"])
            #expect(result.status == 74, "\(result.standardOutput) \(result.standardError)")
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError.contains("-wal"))
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == log)
        }
    }
}
