import AnyDefaultsCore
import AnyDefaultsSQLite
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

@Suite struct SQLiteBadInputTests {
    /// Opens `path`, reads everything, and returns the error; the file must come out unchanged.
    private func failure(opening path: String) throws -> DefaultsError? {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: DefaultsError.self) {
            let store = try SQLiteProvider(path: path)
            _ = try store.allValues()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the file was changed")
        return error
    }

    @Test func aFileThatIsNotSQLiteIsCorruptedAndKept() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("notes.txt")
            try Data("These are my notes, not a database.\n".utf8).write(to: URL(fileURLWithPath: path))
            let error = try failure(opening: path)
            #expect(error?.code == .corrupted)
            #expect(error?.path == path)
            #expect(error?.backend == "SQLite")
        }
    }

    @Test func aZeroedFileIsCorruptedAndKept() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.int(1), forKey: "k")
            let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
            try Data(count: size).write(to: URL(fileURLWithPath: path))
            let error = try failure(opening: path)
            #expect(error?.code == .corrupted)
            #expect(error?.path == path)
        }
    }

    @Test(arguments: [50, 4096, 3])
    func aTruncatedFileIsCorruptedAndKept(cut: Int) throws {
        try withStore { store, directory in
            let path = store.path
            try store.apply((0..<300).map { .set("key.\($0)", .string(String(repeating: "x", count: 100))) })
            store.close()
            let whole = try Data(contentsOf: URL(fileURLWithPath: path))
            // 50 bytes and 4096 (the first page only) are absolute; 3 means a third of the file.
            let length = cut == 3 ? whole.count / 3 : cut
            try whole.prefix(length).write(to: URL(fileURLWithPath: path))
            let error = try failure(opening: path)
            #expect(error?.code == .corrupted)
            #expect(error?.path == path)
        }
    }

    @Test func aMissingDirectoryIsNotFound() throws {
        try withTemporaryDirectory { directory in
            let missing = directory.path("missing")
            let error = #expect(throws: DefaultsError.self) {
                try SQLiteProvider(path: missing + "/deeper/store.sqlite")
            }
            #expect(error?.code == .notFound)
            #expect(error?.path == missing + "/deeper")
            #expect(!FileManager.default.fileExists(atPath: missing))
        }
    }

    @Test func aDirectoryIsNotAStore() throws {
        try withTemporaryDirectory { directory in
            let error = #expect(throws: DefaultsError.self) { try SQLiteProvider(path: directory.path) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.path == directory.path)
            #expect(throws: DefaultsError.self) { try SQLiteProvider(path: "") }
        }
    }

    @Test func newFilesAreOwnerOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            let previous = umask(0o022)
            defer { umask(previous) }
            let store = try SQLiteProvider(path: path)
            try store.setValue(.int(1), forKey: "k")
            for file in [path, path + "-wal", path + "-shm"] {
                var info = stat()
                #expect(stat(file, &info) == 0, "\(file) should exist while the store is open")
                #expect(info.st_mode & 0o777 == 0o600, "\(file)")
            }
        }
    }

    /// A store file made read-only (chmod 400, the directory writable) is read, and refuses
    /// writes with `permissionDenied`; the file is unchanged.
    @Test func aReadOnlyFileIsReadAndRefusesWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.string("kept"), forKey: "k")
            try handToUnprivilegedUser(directory, files: [path])
            chmod(path, 0o400)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(try readAndWriteUnprivileged(path) == "read \"kept\"\nerror permissionDenied \(path)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    /// A store in a read-only directory is read (as an immutable file: SQLite cannot make its
    /// -wal and -shm there), and refuses writes; a new store cannot be created there.
    @Test func aReadOnlyDirectoryIsReadAndRefusesWrites() throws {
        try withTemporaryDirectory { directory in
            let existing = directory.path("store.sqlite")
            try SQLiteProvider(path: existing).setValue(.string("kept"), forKey: "k")
            try handToUnprivilegedUser(directory, files: [existing])
            chmod(directory.path, 0o555)
            let before = try Data(contentsOf: URL(fileURLWithPath: existing))
            #expect(try readAndWriteUnprivileged(existing) == "read \"kept\"\nerror permissionDenied \(existing)")
            #expect(try openUnprivileged(directory.path("new.sqlite")) == "error permissionDenied \(directory.path)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == before)
            #expect(!FileManager.default.fileExists(atPath: directory.path("new.sqlite")))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["store.sqlite", "store.sqlite-counter", "store.sqlite-reserve"])
        }
    }

    /// Runs the child's `readwrite` command (reading `k`) without root, where permissions apply.
    private func readAndWriteUnprivileged(_ path: String) throws -> String {
        let result = try ChildProcess.run("TestChild", ["readwrite", "sqlite:" + path, "k", "--unprivileged"])
        return try Self.output(result)
    }

    /// Runs the child's `open` command without root, where permissions apply.
    private func openUnprivileged(_ path: String) throws -> String {
        let result = try ChildProcess.run("TestChild", ["open", "sqlite:" + path, "--unprivileged"])
        return try Self.output(result)
    }

    /// The child's output, which ends with an error line exactly when it failed (status 1).
    private static func output(_ result: ChildProcess.Result) throws -> String {
        let output = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let failed = output.split(separator: "\n").last?.hasPrefix("error ") == true
        #expect(result.status == (failed ? 1 : 0), "\(result.standardError)")
        return output
    }

    /// When the tests run as root (which ignores permissions), gives the directory and files to
    /// the user the child switches to.
    private func handToUnprivilegedUser(_ directory: TemporaryDirectory, files: [String]) throws {
        guard geteuid() == 0 else { return }
        for item in [directory.path] + files {
            #expect(chown(item, 65534, 65534) == 0, "chown \(item)")
        }
    }
}
