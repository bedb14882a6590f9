import AnyDefaultsCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads and crash-safe whole-file writes with POSIX calls.
///
/// A write goes to a temporary file in the same directory, which is synced, renamed over the
/// target and followed by a sync of the directory: a crash at any point leaves either the old
/// file or the new one, never a torn or empty one.
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
    static let maximumSize = 1 << 30

    /// The bytes of the regular file at `path` and the stamp of what was read, or `nil` if
    /// there is no file.
    static func contents(at path: String) throws(SystemCallError) -> (bytes: [UInt8], stamp: FileStamp)? {
        // O_NONBLOCK so that a FIFO at the path cannot block the open.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .last("open", path: path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .last("fstat", path: path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SystemCallError(call: "open", path: path, number: info.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL)
        }
        guard info.st_size <= maximumSize else { throw SystemCallError(call: "read", path: path, number: EFBIG) }
        // One byte more than the size, so that the usual read ends without growing the buffer.
        var bytes = [UInt8](repeating: 0, count: max(Int(info.st_size), 0) + 1)
        var filled = 0
        while true {
            if filled == bytes.count {
                // The file grew while being read.
                guard filled <= maximumSize else { throw SystemCallError(call: "read", path: path, number: EFBIG) }
                bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096)))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .last("read", path: path)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return (bytes, FileStamp(info))
    }

    /// Replaces the file at `path` with `bytes`, crash-safely, and returns the stamp of the new
    /// file. The new file takes the permissions and, where allowed, the owner of `previous` (the
    /// file it replaces), or is owner-only (`0600`) if there was none. Nothing is left behind on
    /// failure.
    ///
    /// The rename is the commit point: a failure to sync the directory afterwards is not
    /// reported, since the new contents are in place by then.
    static func replace(_ path: String, with bytes: [UInt8], previous: FileStamp?) throws(SystemCallError) -> FileStamp {
        let temporary = temporaryPath(for: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .last("open", path: temporary) }
        var stamp: FileStamp
        do throws(SystemCallError) {
            defer { close(descriptor) }
            if let previous {
                // Keep the owner when an administrator writes a user's file (only root may chown).
                if previous.owner != geteuid() || previous.group != getegid() {
                    _ = fchown(descriptor, uid_t(previous.owner), gid_t(previous.group))
                }
                if previous.permissions != 0o600, fchmod(descriptor, mode_t(previous.permissions)) != 0 {
                    throw .last("fchmod", path: temporary)
                }
            }
            try writeAll(bytes, to: descriptor, path: temporary)
            guard fullSync(descriptor) else { throw .last("fsync", path: temporary) }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw .last("fstat", path: temporary) }
            stamp = FileStamp(info)
            guard rename(temporary, path) == 0 else { throw .last("rename", path: path) }
        } catch {
            unlink(temporary)
            throw error
        }
        syncDirectory(of: path)
        return stamp
    }

    /// Moves the file at `path` to `target` (same directory) and makes the move durable.
    static func move(_ path: String, to target: String) throws(SystemCallError) {
        guard rename(path, target) == 0 else { throw .last("rename", path: path) }
        syncDirectory(of: path)
    }

    /// Whether anything (a file, a link, a directory) exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The last component of `path`.
    static func name(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.utf8.last == UInt8(ascii: "/") { trimmed.removeLast() }
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return String(trimmed) }
        return String(trimmed[trimmed.utf8.index(after: slash)...])
    }

    /// The directory part of an absolute `path`.
    static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Removes the temporary files that writers of `path` left when they died mid-write: those
    /// whose process no longer exists.
    static func removeAbandonedTemporaryFiles(of path: String) {
        let directory = directory(of: path)
        let prefix = temporaryPrefix(for: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let owner = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(owner), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink((directory == "/" ? "" : directory) + "/" + name)
        }
    }

    /// `.<name>.tmp-<pid>-<random>` next to the file: hidden, and traceable to its writer.
    private static func temporaryPath(for path: String) -> String {
        let directory = directory(of: path)
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return (directory == "/" ? "" : directory) + "/" + temporaryPrefix(for: path) + "\(getpid())-" + random
    }

    private static func temporaryPrefix(for path: String) -> String {
        "." + name(of: path) + ".tmp-"
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .last("write", path: path)
            }
            written += count
        }
    }

    /// Flushes a file's data to stable storage. On Apple systems `fsync` leaves data in the
    /// drive's cache, so `F_FULLFSYNC` is asked first.
    private static func fullSync(_ descriptor: Int32) -> Bool {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return true }
        #endif
        while fsync(descriptor) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }

    /// Makes a rename in the directory of `path` durable.
    private static func syncDirectory(of path: String) {
        let descriptor = open(directory(of: path), O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}
