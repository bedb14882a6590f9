import AnyDefaultsCore
import Foundation
import TestSupport
import Testing

/// The core's file helpers, which the JSON and UserDefaults backends and the tool share: the
/// link rule, owner and mode, read-only files, names, temporary files, non-blocking reads, file
/// identity, and messages that stay on one line.
@Suite struct FileReplacementTests {
    private func isLink(_ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }

    /// A replacement holds exactly the bytes given, at every size around the writes' edges and at
    /// seeded random sizes (a short write or an off-by-one in the write loop shows here).
    @Test func aReplacedFileHoldsExactlyTheBytesGiven() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("exact.bin")
            var generator = SeededGenerator(seed: 2029)
            let sizes = [0, 1, 2, 4095, 4096, 4097, 65_537] + (0..<4).map { _ in Int(generator.next() % 1_000_000) }
            for size in sizes {
                let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                try FileReplacement.replace(path, with: bytes)
                #expect(FileManager.default.contents(atPath: path) == Data(bytes), "size \(size) (seed 2029)")
            }
        }
    }

    @Test func writesGoThroughLinksAndCreateADanglingLinksTarget() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("file")
            try FileReplacement.replace(file, with: Array("one".utf8))
            try FileManager.default.createSymbolicLink(atPath: directory.path("link"), withDestinationPath: "file")
            #expect(try FileReplacement.target(of: directory.path("link")) == directory.path("file"))
            try FileReplacement.replace(try FileReplacement.target(of: directory.path("link")), with: Array("two".utf8))
            #expect(isLink(directory.path("link")))
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "two")
            // Dangling, through two hops: the final target is where the write lands.
            try FileManager.default.createSymbolicLink(atPath: directory.path("a"), withDestinationPath: directory.path("b"))
            try FileManager.default.createSymbolicLink(atPath: directory.path("b"), withDestinationPath: "sub/../created")
            try FileManager.default.createDirectory(atPath: directory.path("sub"), withIntermediateDirectories: true)
            let target = try FileReplacement.target(of: directory.path("a"))
            #expect(target == directory.path("sub/../created"))
            let info = try FileReplacement.replace(target, with: Array("new".utf8))
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(isLink(directory.path("a")) && isLink(directory.path("b")))
            #expect(try String(contentsOfFile: directory.path("created"), encoding: .utf8) == "new")
            // A loop of links.
            try FileManager.default.createSymbolicLink(atPath: directory.path("loop1"), withDestinationPath: "loop2")
            try FileManager.default.createSymbolicLink(atPath: directory.path("loop2"), withDestinationPath: "loop1")
            #expect(throws: SystemCallError.self) { try FileReplacement.target(of: directory.path("loop1")) }
        }
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to make links owned by another user"))
    func aLinkOfAnotherUserInAStickyWorldWritableDirectoryIsNotFollowed() throws {
        try withTemporaryDirectory { directory in
            let shared = directory.path("shared")
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
            #expect(chmod(shared, 0o1777) == 0)
            try FileManager.default.createSymbolicLink(atPath: shared + "/theirs", withDestinationPath: directory.path("victim"))
            #expect(lchown(shared + "/theirs", 65534, 65534) == 0)
            let error = try #require(throws: SystemCallError.self) { try FileReplacement.target(of: shared + "/theirs") }
            #expect(error.code == .permissionDenied)
            // Mine: followed. Without the sticky bit, or not world-writable: followed.
            try FileManager.default.createSymbolicLink(atPath: shared + "/mine", withDestinationPath: directory.path("victim"))
            #expect(try FileReplacement.target(of: shared + "/mine") == directory.path("victim"))
            for mode: mode_t in [0o0777, 0o1775] {
                #expect(chmod(shared, mode) == 0)
                #expect(try FileReplacement.target(of: shared + "/theirs") == directory.path("victim"))
            }
            // Owned by the directory's owner: followed.
            #expect(chmod(shared, 0o1777) == 0 && chown(shared, 65534, 65534) == 0)
            #expect(try FileReplacement.target(of: shared + "/theirs") == directory.path("victim"))
        }
    }

    /// A file resolved earlier, where another user has since planted a link in a sticky,
    /// world-writable directory: replacing it neither follows the link (the write would land in
    /// their file) nor replaces the link with a file taking its target's mode.
    @Test(.enabled(if: geteuid() == 0, "needs root to make links owned by another user"))
    func aLinkPlantedAfterTheTargetWasResolvedIsNotFollowed() throws {
        try withTemporaryDirectory { directory in
            let shared = directory.path("shared")
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
            #expect(chmod(shared, 0o1777) == 0)
            let resolved = try FileReplacement.target(of: shared + "/settings")
            let theirs = directory.path("theirs")
            #expect(FileManager.default.createFile(atPath: theirs, contents: Data("theirs".utf8)))
            #expect(chown(theirs, 65534, 65534) == 0 && chmod(theirs, 0o666) == 0)
            try FileManager.default.createSymbolicLink(atPath: resolved, withDestinationPath: theirs)
            #expect(lchown(resolved, 65534, 65534) == 0)
            let error = try #require(throws: SystemCallError.self) { try FileReplacement.replace(resolved, with: Array("mine".utf8)) }
            #expect(error.code == .permissionDenied)
            #expect(FileManager.default.contents(atPath: theirs) == Data("theirs".utf8))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: resolved) == theirs)
        }
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to write another user's file"))
    func aReplacementKeepsTheOwnerGroupAndMode() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("theirs")
            try FileReplacement.replace(file, with: Array("old".utf8))
            #expect(chown(file, 1234, 5678) == 0 && chmod(file, 0o2640) == 0)
            let info = try FileReplacement.replace(file, with: Array("new".utf8))
            #expect(info.st_uid == 1234 && info.st_gid == 5678 && info.st_mode & 0o7777 == 0o2640)
        }
    }

    @Test func aReadOnlyFileIsNotReplacedEvenByRoot() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("read-only")
            try FileReplacement.replace(file, with: Array("keep".utf8))
            for mode: mode_t in [0o400, 0o444, 0o555, 0o000] {
                #expect(chmod(file, mode) == 0)
                let error = try #require(throws: SystemCallError.self) { try FileReplacement.replace(file, with: Array("lost".utf8)) }
                #expect(error.code == .permissionDenied)
                #expect(error.description.contains("read-only"))
            }
            #expect(chmod(file, 0o600) == 0)
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["read-only"])
        }
    }

    @Test func onlyRegularFilesAreReplacedOrRead() throws {
        try withTemporaryDirectory { directory in
            #expect(mkfifo(directory.path("fifo"), 0o600) == 0)
            try FileManager.default.createDirectory(atPath: directory.path("dir"), withIntermediateDirectories: true)
            for (path, code) in [(directory.path("fifo"), DefaultsError.Code.invalidConfiguration), (directory.path("dir"), .invalidConfiguration)] {
                let replaced = try #require(throws: SystemCallError.self) { try FileReplacement.replace(path, with: [1]) }
                #expect(replaced.code == code)
                // Reading never blocks on the FIFO.
                let read = try #require(throws: SystemCallError.self) { try FileContents.read(path) }
                #expect(read.code == code)
            }
            #expect(try FileContents.read(directory.path("absent")) == nil)
            #expect(throws: SystemCallError.self) { try FileContents.read("/dev/null") }
        }
    }

    @Test func namesWithoutRoomForTheirSidecarsAreRefused() throws {
        try withTemporaryDirectory { directory in
            let fits = directory.path(String(repeating: "a", count: 255 - FileReplacement.temporaryNameOverhead))
            try FileReplacement.checkNameLength(of: fits, longestSuffix: 5)
            try FileReplacement.replace(fits, with: [1])
            let tooLong = directory.path(String(repeating: "a", count: 256 - FileReplacement.temporaryNameOverhead))
            let error = try #require(throws: SystemCallError.self) { try FileReplacement.checkNameLength(of: tooLong, longestSuffix: 5) }
            #expect(error.code == .invalidConfiguration)
            #expect(throws: SystemCallError.self) {
                try FileReplacement.checkNameLength(of: directory.path(String(repeating: "a", count: 200)), longestSuffix: 60)
            }
        }
    }

    @Test func temporaryFilesAreRemovedOnlyWhenCertainlyAbandoned() throws {
        try withTemporaryDirectory { directory in
            let target = directory.path("store")
            let dead = try ChildProcess.endedProcessIdentifier()
            let old = Date(timeIntervalSinceNow: -3600)
            func plant(_ name: String, modified: Date = old) throws {
                try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path(name)))
                try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: directory.path(name))
            }
            try plant(".store.tmp-\(dead)-gone")
            try plant(".store.tmp-\(getpid())-running")
            try plant(".store.tmp-\(dead)-new", modified: Date())
            try plant(".store.tmp-\(dead)-locked")
            try plant(".store.tmp-garbage")
            try plant(".stores.tmp-\(dead)-other")
            let lock = open(directory.path(".store.tmp-\(dead)-locked"), O_RDONLY)
            defer { close(lock) }
            #expect(flock(lock, LOCK_EX) == 0)
            FileReplacement.removeAbandonedTemporaryFiles(of: target)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == [
                ".store.tmp-\(getpid())-running", ".store.tmp-\(dead)-new", ".store.tmp-\(dead)-locked", ".stores.tmp-\(dead)-other",
            ])
            // ".store.tmp-garbage" names no process: abandoned, old and unlocked, it went too.
        }
    }

    // MARK: Identity

    @Test func identityFollowsEverySpellingOfOneFile() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("data")
            try FileReplacement.replace(file, with: [1])
            try FileManager.default.linkItem(atPath: file, toPath: directory.path("hard"))
            try FileManager.default.createSymbolicLink(atPath: directory.path("soft"), withDestinationPath: "data")
            try FileManager.default.createDirectory(atPath: directory.path("sub"), withIntermediateDirectories: true)
            let identity = try #require(FileIdentity(path: file))
            for spelling in [directory.path("hard"), directory.path("soft"), directory.path("sub/../data"), directory.path + "/./data", directory.path + "//data"] {
                #expect(FileIdentity(path: spelling) == identity, "\(spelling)")
            }
            #expect(FileIdentity(path: directory.path("sub")) != identity)
            // Files not yet there: the same name in the same directory, however spelled.
            #expect(FileIdentity(path: directory.path("later")) == FileIdentity(path: directory.path("sub/../later")))
            #expect(FileIdentity(path: directory.path("later")) != FileIdentity(path: directory.path("other")))
            #expect(FileIdentity(path: directory.path("missing/x")) == nil)

            let store = DefaultsStoreIdentity.files(file, sidecars: [file + "-wal"])
            #expect(store.contains(file: directory.path("hard")))
            #expect(store.contains(file: directory.path("sub/../data-wal")))
            #expect(!store.contains(file: directory.path("data-shm")))
            #expect(store.overlaps(.files(directory.path("soft"))))
            #expect(store.overlaps(.files(directory.path("other"), sidecars: [directory.path("data-wal")])))
            #expect(!store.overlaps(.files(directory.path("other"))))
            #expect(!store.overlaps(.named("data", backend: "X")))
            #expect(DefaultsStoreIdentity.named("a", backend: "X").overlaps(.named("a", backend: "X")))
            #expect(!DefaultsStoreIdentity.named("a", backend: "X").overlaps(.named("a", backend: "Y")))
        }
    }

    // MARK: Messages

    @Test func messagesStayOnOneLine() {
        let hostile = "a\nb\rc\td\u{1B}[2Je\u{7F}f\u{85}g\u{2028}h\u{2029}i\u{202E}j\u{2066}k\u{0}l"
        let error = DefaultsError(
            .notFound, "Missing \(hostile).", backend: "Test", key: hostile, path: "/tmp/\(hostile)",
            cause: SystemCallError(call: "open", path: "/tmp/\(hostile)", number: ENOENT))
        let text = error.description
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || [0x2028, 0x2029, 0x202E, 0x2066].contains($0.value) })
        #expect(text.contains("\\u{0A}") && text.contains("\\u{1B}") && text.contains("\\u{202E}"))
        #expect(DefaultsError.printable("plain \\ text, café 👨‍👩‍👧") == "plain \\ text, café 👨‍👩‍👧")
    }
}
