import AnyDefaultsCore
import Foundation
import TestSupport
import Testing

/// A file's creation time tells a file apart from a later one that took its inode number, which
/// the identity recorded beside a store relies on.
@Suite struct FileBirthTests {
    @Test func aFileKeepsItsCreationTimeAndANewFileWithItsNumberHasAnother() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings")
            #expect(FileManager.default.createFile(atPath: path, contents: Data("one".utf8)))
            let born = FileBirth.of(path: path)
            // Every file system a store lives on here records it (ext4, XFS, Btrfs, tmpfs, APFS).
            try #require(born != 0, "the temporary directory's file system records no creation time")
            let descriptor = open(path, O_RDWR)
            try #require(descriptor >= 0)
            #expect(FileBirth.of(descriptor: descriptor) == born)
            #expect(write(descriptor, "more", 4) == 4)
            close(descriptor)
            #expect(FileBirth.of(path: path) == born, "a write changed the creation time")

            let number = FileID(path: path)?.inode
            var attempts = 0
            repeat {
                try FileManager.default.removeItem(atPath: path)
                #expect(FileManager.default.createFile(atPath: path, contents: Data("two".utf8)))
                attempts += 1
            } while FileID(path: path)?.inode != number && attempts < 100
            let later = FileBirth.of(path: path)
            #expect(later != 0 && later != born)
            // A counter file's own identity: the same device and inode number, another file.
            let file = try #require(FileID(path: path))
            try #require(file.inode == number, "this file system gave no new file the deleted one's inode number")
            #expect(SharedChangeCounter.identity(file, born: later) != SharedChangeCounter.identity(file, born: born))
            #expect(FileBirth.of(path: directory.path("missing")) == 0)
        }
    }
}
