import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Store files are readable by their owner only: files `0600`, directories the store creates
/// `0700`, whatever the umask (the writer runs with umask 0).
@Suite(.ownThreads) struct PermissionTests {
    @Test(arguments: TestStore.persistentSchemes)
    func storesCreateOwnerOnlyFilesAndDirectories(scheme: String) throws {
        try withTemporaryDirectory { directory in
            // The store lives three directories below one that exists.
            let root = directory.path("created")
            let store = try TestStore(scheme, base: root + "/a/b", forChildren: true)
            var result = try ChildProcess.run("TestChild", ["touch", store.store], environment: store.environment)
            var madeByTest: Set<String> = []
            if result.status != 0, result.standardError.contains("notFound") {
                // A backend that does not create directories (SQLite) says so with a typed error:
                // make them here, and check the files it creates.
                try FileManager.default.createDirectory(atPath: root + "/a/b", withIntermediateDirectories: true)
                madeByTest = [root, root + "/a", root + "/a/b"]
                result = try ChildProcess.run("TestChild", ["touch", store.store], environment: store.environment)
            }
            #expect(result.status == 0, "\(result.standardOutput) \(result.standardError)")
            var checked = 0
            for (path, isDirectory, mode) in Self.walk(root) where !madeByTest.contains(path) {
                checked += 1
                #expect(mode == (isDirectory ? 0o700 : 0o600), "\(path): \(String(mode, radix: 8))")
            }
            #expect(checked >= 1, "nothing was created under \(root)")
            #expect(FileManager.default.fileExists(atPath: store.dataFile))
        }
    }

    /// Every file and directory under `root`, with its permission bits.
    static func walk(_ root: String) -> [(path: String, isDirectory: Bool, mode: Int)] {
        var result: [(String, Bool, Int)] = []
        var pending = [root]
        while let path = pending.popLast() {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            result.append((path, isDirectory, Int(info.st_mode & 0o777)))
            if isDirectory {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                    pending.append(path + "/" + name)
                }
            }
        }
        return result
    }
}
