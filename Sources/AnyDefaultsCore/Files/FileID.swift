import AnyDefaultsPlatform

/// A file's device and inode as `stat` reports them: the one identity by which instances that
/// open one file (under any spelling of its path) find each other and share state, and by which a
/// store notices that its file was replaced.
package struct FileID: Hashable, Sendable, CustomStringConvertible {
    package var device: UInt64
    package var inode: UInt64

    package var description: String { "\(device):\(inode)" }
}

extension FileID {
    /// `dev_t` is signed on Apple platforms (where a device number may be negative, and
    /// `UInt64(_:)` would trap) and unsigned on Linux: either way its bits identify the device.
    package init(_ info: stat) {
        self.init(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// The identity of what `path` names (links followed), or `nil` if `stat` fails.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity of the file open as `descriptor`, or `nil` if `fstat` fails.
    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }
}

extension stat {
    /// The file's identity (``FileID``).
    package var fileID: FileID { FileID(self) }

    /// The last modification time: `st_mtim` on Linux, `st_mtimespec` on Apple platforms.
    package var modificationTime: (seconds: Int64, nanoseconds: Int64) { Self.parts(modified) }

    /// The last change of the file's status (`st_ctim` / `st_ctimespec`).
    package var changeTime: (seconds: Int64, nanoseconds: Int64) { Self.parts(changed) }

    #if canImport(Darwin)
    private var modified: timespec { st_mtimespec }
    private var changed: timespec { st_ctimespec }
    #else
    private var modified: timespec { st_mtim }
    private var changed: timespec { st_ctim }
    #endif

    private static func parts(_ time: timespec) -> (seconds: Int64, nanoseconds: Int64) {
        (Int64(time.tv_sec), Int64(time.tv_nsec))
    }
}
