import AnyDefaultsCore
import Foundation
import TestSupport
import Testing

/// A file's creation time tells a file apart from a later one that took its inode number, which
/// the identity recorded beside a store relies on.
@Suite struct FileBirthTests {
    /// The creation time of the file at `path`, or 0 if there is none.
    static func birth(ofFileAt path: String) -> UInt64 {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        return FileBirth.of(descriptor: descriptor)
    }

    @Test func aFileKeepsItsCreationTimeAndANewFileWithItsNumberHasAnother() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings")
            #expect(FileManager.default.createFile(atPath: path, contents: Data("one".utf8)))
            let born = Self.birth(ofFileAt: path)
            // Every file system a store lives on here records it (ext4, XFS, Btrfs, tmpfs, APFS).
            try #require(born != 0, "the temporary directory's file system records no creation time")
            let descriptor = open(path, O_RDWR)
            try #require(descriptor >= 0)
            #expect(FileBirth.of(descriptor: descriptor) == born)
            #expect(write(descriptor, "more", 4) == 4)
            close(descriptor)
            #expect(Self.birth(ofFileAt: path) == born, "a write changed the creation time")

            // Delete the file and make another until the new one takes the deleted one's inode
            // number. Each round only needs its own freed number back: a test running beside this
            // one may create a file that keeps an earlier number for good. The pause lets the
            // file system's clock (coarse, a tick of up to 10 ms) move on, so the two files were
            // not born in the same tick.
            var previous = try #require(FileID(path: path))
            var previousBirth = Self.birth(ofFileAt: path)
            var reused: (file: FileID, born: UInt64, later: UInt64)?
            for _ in 0..<200 where reused == nil {
                usleep(12_000)
                try FileManager.default.removeItem(atPath: path)
                #expect(FileManager.default.createFile(atPath: path, contents: Data("two".utf8)))
                let file = try #require(FileID(path: path))
                let later = Self.birth(ofFileAt: path)
                if file == previous {
                    reused = (file, previousBirth, later)
                } else {
                    previous = file
                    previousBirth = later
                }
            }
            let (file, earlier, later) = try #require(reused, "this file system gave no new file the deleted one's inode number")
            #expect(later != 0 && later != earlier)
            // A counter file's own identity: the same device and inode number, another file.
            #expect(SharedChangeCounter.identity(file, born: later) != SharedChangeCounter.identity(file, born: earlier))
            #expect(Self.birth(ofFileAt: directory.path("missing")) == 0)
        }
    }
}
