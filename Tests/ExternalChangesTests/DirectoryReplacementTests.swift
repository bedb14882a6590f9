import AnyDefaults
import Foundation
import Testing
import TestSupport

/// A store whose directory is removed and made again while a process observes it (a restore, a
/// cleanup script): the observer hears the old keys go, then another process's writes to the
/// store now at the path. (The files the store holds open keep the kernel from reporting the old
/// directory's removal until the store is closed; SQLite and LMDB keep reading the old files
/// until they notice and open the path again.)
@Suite struct DirectoryReplacementTests {
    @Test(arguments: ["json", "lmdb"])
    func aStoreObservedWhileItsDirectoryIsRemovedAndMadeAgainIsFollowed(_ scheme: String) async throws {
        let values = try await BlockingWork.run { () throws -> [DefaultsValue?] in
            try withTemporaryDirectory { directory in
                let folder = directory.path("d")
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let store = "\(scheme):" + folder + "/store.\(scheme)"
                let provider = try Defaults(url: store + "?cache=off").provider
                let events = EventLog(provider)
                try provider.setValue(.int(1), forKey: "k")
                try FileManager.default.removeItem(atPath: folder)
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for value in 2...3 {
                    let result = try ChildProcess.run("anydefaults", ["--store", store, "write", "k", "\(value)", "--type", "int"])
                    guard result.status == 0 else { throw DefaultsError(.ioFailure, "anydefaults write: \(result.standardError)", backend: "test") }
                    _ = eventually { events.all.last?.newValue == .int(Int64(value)) }
                }
                return events.all.filter { $0.key == "k" }.map(\.newValue)
            }
        }
        #expect(values == [DefaultsValue?.some(.int(1)), nil, .some(.int(2)), .some(.int(3))])
    }

    /// Polls `condition` until it holds or `timeout` passes.
    private func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }
}
