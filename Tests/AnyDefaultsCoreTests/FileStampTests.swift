import AnyDefaultsCore
import Foundation
import TestSupport
import Testing

/// A file's stamp tells versions of a file apart without reading it; the stamp a replacement
/// returns is the one the file has afterwards, so a writer does not take its own write for
/// another process's.
@Suite struct FileStampTests {
    private func stamp(_ path: String) throws -> FileStamp {
        var info = stat()
        try #require(stat(path, &info) == 0)
        return FileStamp(info)
    }

    /// A file's time can be anything a file system stores (`touch -d 2400-01-01`, a restored
    /// archive): none makes the check trap, the future counts as recent, the past does not.
    @Test(arguments: [
        (Int64.max, true), (Int64.max - 1, true), (Int64.min, false), (Int64.min + 1, false),
        (1 << 40, true), (-(1 << 40), false), (0, false),
    ] as [(Int64, Bool)])
    func anyModificationTimeIsJudgedWithoutOverflow(_ seconds: Int64, recent: Bool) throws {
        try withTemporaryDirectory { directory in
            var stamp = FileStamp(try FileReplacement.replace(directory.path("f"), with: [1]))
            #expect(stamp.isRecent)
            stamp.modifiedSeconds = seconds
            for nanoseconds: Int64 in [0, 999_999_999] {
                stamp.modifiedNanoseconds = nanoseconds
                #expect(stamp.isRecent == recent)
            }
            // Around now: a second ago is not recent, a second ahead is.
            let now = Int64(Date().timeIntervalSince1970)
            stamp.modifiedSeconds = now - 2
            #expect(!stamp.isRecent)
            stamp.modifiedSeconds = now + 2
            #expect(stamp.isRecent)
        }
    }

    @Test func theStampOfAReplacementIsTheStampOfTheFileAfterwards() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings")
            for round in 0..<5 {
                let written = FileStamp(try FileReplacement.replace(path, with: Array("round \(round)".utf8)))
                #expect(written == (try stamp(path)), "round \(round)")
            }
        }
    }

    @Test func aReplacementAnEditAndAChangeOfModeEachChangeTheStamp() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings")
            let first = FileStamp(try FileReplacement.replace(path, with: Array("one".utf8)))
            let replaced = FileStamp(try FileReplacement.replace(path, with: Array("one".utf8)))
            #expect(replaced != first)
            #expect(replaced.inode != first.inode)

            try #require(chmod(path, 0o640) == 0)
            let modeChanged = try stamp(path)
            #expect(modeChanged != replaced)
            #expect(modeChanged.permissions == 0o640)

            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("!".utf8))
            try handle.close()
            let edited = try stamp(path)
            #expect(edited != modeChanged)
            #expect(edited.inode == modeChanged.inode && edited.size == modeChanged.size + 1)
            #expect(try stamp(path) == edited)
        }
    }
}
