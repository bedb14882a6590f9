import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// The settings file's whole-file reads and crash-safe whole-file writes, through the core's
/// shared file helpers (``FileContents``, ``FileReplacement``): reads never block on a FIFO and
/// take regular files only; a write goes to a temporary file in the same directory, which is
/// synced, renamed over the target and followed by a sync of the directory, keeping the replaced
/// file's owner and mode, and refusing a read-only file.
enum AtomicFile {
    /// The stamp of the file at `path`, or `nil` if there is none.
    static func stamp(_ path: String) throws(SystemCallError) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .last("stat", path: path)
        }
        return FileStamp(info)
    }

    /// The largest file read: the whole file is held in memory, and a settings file this large
    /// is a mistake (it fails with `EFBIG` rather than exhausting memory).
    static let maximumSize = FileContents.defaultMaximumSize

    /// The bytes of the regular file at `path` and the stamp of what was read, or `nil` if
    /// there is no file.
    static func contents(at path: String) throws(SystemCallError) -> (bytes: [UInt8], stamp: FileStamp)? {
        guard let (bytes, info) = try FileContents.read(path, maximumSize: maximumSize) else { return nil }
        return (bytes, FileStamp(info))
    }

    /// Replaces the file at `path` with `bytes`, crash-safely, and returns the stamp of the new
    /// file. A new file is owner-only (`0600`). The rename is the commit point.
    static func replace(_ path: String, with bytes: [UInt8]) throws(SystemCallError) -> FileStamp {
        FileStamp(try FileReplacement.replace(path, with: bytes))
    }

    /// Moves the file at `path` to `target` (same directory) and makes the move durable.
    static func move(_ path: String, to target: String) throws(SystemCallError) {
        guard rename(path, target) == 0 else { throw .last("rename", path: path) }
        FileReplacement.syncDirectory(of: path)
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
