import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// The settings file's whole-file reads and crash-safe whole-file writes, through the core's
/// shared file helpers (``FileContents``, ``FileReplacement``): reads never block on a FIFO and
/// take regular files only; a write goes to a temporary file in the same directory, which is
/// synced, renamed over the target and followed by a sync of the directory, keeping the replaced
/// file's owner and mode, and refusing a read-only file.
enum AtomicFile {
    /// The stamp of the file at `path`, or `nil` if there is none (see
    /// ``FileReplacement/status(of:)`` for a link made there since the store opened).
    static func stamp(_ path: String) throws(SystemCallError) -> FileStamp? {
        try FileReplacement.status(of: path).map(FileStamp.init)
    }

    /// The largest file read: the whole file is held in memory, and a settings file this large
    /// is a mistake (it fails with `EFBIG` rather than exhausting memory).
    static let maximumSize = FileContents.defaultMaximumSize

    /// The bytes of the regular file at `path` and the stamp of what was read, or `nil` if
    /// there is no file.
    static func contents(at path: String) throws(SystemCallError) -> (bytes: [UInt8], stamp: FileStamp)? {
        guard let (bytes, info) = try FileContents.read(try FileReplacement.target(of: path), maximumSize: maximumSize) else { return nil }
        return (bytes, FileStamp(info))
    }

    /// Replaces the file at `path` with `bytes`, crash-safely, and returns the stamp of the new
    /// file. A new file is owner-only (`0600`). The rename is the commit point.
    static func replace(_ path: String, with bytes: [UInt8]) throws(SystemCallError) -> FileStamp {
        FileStamp(try FileReplacement.replace(path, with: bytes))
    }

    /// Whether anything (a file, a link, a directory) exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Removes the temporary files that writers of `path` left when they died mid-write
    /// (``FileReplacement/removeAbandonedTemporaryFiles(of:)``).
    static func removeAbandonedTemporaryFiles(of path: String) {
        FileReplacement.removeAbandonedTemporaryFiles(of: path)
    }
}
