@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

@Suite struct LMDBBadInputTests {
    /// The error opening `path` throws (or a failed expectation if it opens).
    private func openingError(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> DefaultsError? {
        do {
            _ = try LMDBProvider(path: path)
            Issue.record("opened \(path)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    private func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// Fills a store with values that span many pages, including large ones.
    private func fill(_ path: String) throws {
        let store = try LMDBProvider(path: path)
        try store.apply((0..<400).map { .set("key\($0)", .string(String(repeating: "v", count: 100 + $0))) })
        try store.setValue(.data(Data(repeating: 1, count: 200_000)), forKey: "large")
    }

    @Test func notAnLMDBFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let content = Data(String(repeating: "not a database\n", count: 1000).utf8)
            try content.write(to: URL(fileURLWithPath: path + "/data.mdb"))
            let error = try #require(openingError(path))
            #expect(error.code == .corrupted)
            #expect(error.path == canonical(path))
            #expect(error.description.contains(canonical(path)))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == content)
        }
    }

    @Test func truncatedFiles() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try fill(path)
            let file = path + "/data.mdb"
            let original = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(original.count > 40 * 4096)
            for length in [4096, 4096 * 2 + 100, original.count / 2, original.count - 4096, original.count - 1] {
                try original.prefix(length).write(to: URL(fileURLWithPath: file))
                let error = try #require(openingError(path), "cut to \(length) bytes")
                #expect(error.code == .corrupted, "cut to \(length) bytes")
                #expect(error.path == canonical(path))
                #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == original.prefix(length), "changed")
            }
            // Restored, it opens with everything in it.
            try original.write(to: URL(fileURLWithPath: file))
            #expect(try LMDBProvider(path: path).keys().count == 401)
        }
    }

    @Test func fileEndingAfterTheLastReachablePageStillOpens() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            do {
                let store = try LMDBProvider(path: path)
                // Churn: a large value written and removed leaves free pages behind the live ones.
                try store.setValue(.data(Data(repeating: 2, count: 400_000)), forKey: "large")
                for index in 0..<20 { try store.setValue(.int(Int64(index)), forKey: "k\(index)") }
                try store.removeValue(forKey: "large")
                for index in 0..<20 { try store.setValue(.int(Int64(index + 1)), forKey: "k\(index)") }
            }
            let file = path + "/data.mdb"
            let fd = open(file, O_RDONLY)
            #expect(fd >= 0)
            let size = lseek(fd, 0, SEEK_END)
            var walk = LMDBPageWalk(fd: fd, pageSize: 4096, filePages: Int(size) / 4096, path: path)
            let highest = try walk.run()
            close(fd)
            // Cutting the unreachable tail must not make the store unopenable (nor crash it).
            #expect(Int(highest + 1) * 4096 < Int(size), "the churn left no unreachable tail")
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            try data.prefix(Int(highest + 1) * 4096).write(to: URL(fileURLWithPath: file))
            let store = try LMDBProvider(path: path)
            #expect(try store.allValues() == Dictionary(uniqueKeysWithValues: (0..<20).map { ("k\($0)", DefaultsValue.int(Int64($0 + 1))) }))
        }
    }

    @Test func missingParentDirectory() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("missing/store")
            let error = try #require(openingError(path))
            #expect(error.code == .notFound)
            #expect(error.path == path)
            #expect(!FileManager.default.fileExists(atPath: directory.path("missing")))
        }
    }

    @Test func pathNamesAFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("file")
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            let error = try #require(openingError(path))
            #expect(error.code == .invalidConfiguration)
            #expect(error.path == path)
        }
    }

    @Test func readOnlyLocation() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try fill(path)
            // The store can be read but not written by anyone but root.
            for file in ["data.mdb", "lock.mdb"] { chmod(path + "/" + file, 0o644) }
            chmod(path, 0o755)
            chmod(directory.path, 0o755)
            if getuid() == 0 {
                let child = try ChildProcess.run("TestChild", ["open", "lmdb:" + path, "--unprivileged"])
                #expect(child.status == 1, "\(child.standardError)")
                #expect(child.standardOutput.hasPrefix("error permissionDenied"), "\(child.standardOutput)")
                #expect(child.standardOutput.contains(canonical(path)))
            } else {
                for file in ["data.mdb", "lock.mdb"] { chmod(path + "/" + file, 0o444) }
                chmod(path, 0o555)
                let error = try #require(openingError(path))
                #expect(error.code == .permissionDenied)
                #expect(error.path == canonical(path))
                chmod(path, 0o700)
            }
            #expect(try LMDBProvider(path: path).keys().count == 401)
        }
    }

    /// A store whose data file is made read-only (chmod 400; its directory and lock file still
    /// writable) is read, and refuses writes with `permissionDenied`; the data file is unchanged.
    /// Permissions bind only an ordinary user: as root, the child runs as nobody.
    @Test func aReadOnlyDataFileIsReadAndRefusesWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try fill(path)
            chmod(directory.path, 0o755)
            let owner: uid_t = getuid() == 0 ? 65534 : getuid()
            for name in try FileManager.default.contentsOfDirectory(atPath: path) { chown(path + "/" + name, owner, owner) }
            chown(path, owner, owner)
            chmod(path + "/data.mdb", 0o400)
            let before = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
            let child = try ChildProcess.run("TestChild", ["readwrite", "lmdb:" + path, "key7", "--unprivileged"])
            #expect(child.status == 1, "\(child.standardError)")
            let lines = child.standardOutput.split(separator: "\n")
            #expect(lines.first == "read \"\(String(repeating: "v", count: 107))\"", "\(child.standardOutput)")
            #expect(lines.count == 2 && lines[1].hasPrefix("error permissionDenied"), "\(child.standardOutput)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == before)
            chmod(path + "/data.mdb", 0o600)
            #expect(try LMDBProvider(path: path).keys().count == 401)
        }
    }

    @Test func unwritableParentDirectory() throws {
        try withTemporaryDirectory { directory in
            // As root, nothing is unwritable in a temporary directory; /sys refuses even root.
            let parent = getuid() == 0 ? "/sys" : directory.path("locked")
            if getuid() != 0 {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false)
                chmod(parent, 0o500)
            }
            let path = parent + "/anydefaults-store-\(UUID().uuidString)"
            let error = try #require(openingError(path))
            #expect(error.code == .permissionDenied)
            #expect(error.path == path)
        }
    }

    @Test func foreignLMDBDatabaseIsLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try RawLMDB.put([(Array("theirs".utf8), [0xDE, 0xAD])], path: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
            let error = try #require(openingError(path))
            #expect(error.code == .incompatibleFormat)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == before)
        }
    }

    @Test func newerStoreFormatIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try LMDBProvider(path: path).setValue(.int(1), forKey: "a")
            try RawLMDB.put([(LMDBKeyScheme.formatMarkerKey, [LMDBKeyScheme.storeFormatVersion + 1])], path: path)
            let error = try #require(openingError(path))
            #expect(error.code == .incompatibleFormat)
        }
    }

    @Test func damagedRecordsGiveErrorsNamingTheKey() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try LMDBProvider(path: path).setValue(.int(1), forKey: "good")
            let longKey = String(repeating: "l", count: 600)
            let derived = Array(longKey.utf8).withUnsafeBytes { LMDBKeyScheme.standard.derivedKey($0) }
            try RawLMDB.put([
                (Array("bad".utf8), [1, 0x04, 0x09, 0x61]),
                (Array("newer".utf8), [9, 0x01]),
                (derived, [1, 0x01]),
            ], path: path)
            let store = try LMDBProvider(path: path)
            #expect(try store.value(forKey: "good") == .int(1))
            #expect { try store.value(forKey: "bad") } throws: { error in
                let error = error as? DefaultsError
                return error?.code == .corrupted && error?.key == "bad" && error?.path == canonical(path)
            }
            #expect { try store.value(forKey: "newer") } throws: { ($0 as? DefaultsError)?.code == .incompatibleFormat }
            #expect { try store.value(forKey: longKey) } throws: { ($0 as? DefaultsError)?.code == .corrupted }
            #expect(throws: DefaultsError.self) { try store.allValues() }
            // Writing replaces a damaged record.
            try store.setValue(.int(2), forKey: "bad")
            try store.setValue(.int(3), forKey: longKey)
            #expect(try store.value(forKey: "bad") == .int(2))
            #expect(try store.value(forKey: longKey) == .int(3))
            try store.removeValue(forKey: "newer")
            #expect(Set(try store.keys()) == ["good", "bad", longKey])
        }
    }
}
