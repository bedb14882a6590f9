import Foundation
import Synchronization

import AnyDefaultsPlatform

/// Crash-safe replacement of whole files, under one rule for links, owners, modes and temporary
/// files: the one implementation behind the JSON file and UserDefaults backends and the output
/// files of the `anydefaults` tool (Docs/Reliability.md, "Links and ownership").
///
/// - **Links** are written through: a write to a symbolic link replaces the file it names (and
///   creates it when the link dangles); the link stays a link. In a sticky, world-writable
///   directory such as `/tmp` a link is followed only if it belongs to the writer or to the
///   directory's owner, the rule of Linux's `protected_symlinks`; otherwise the write is refused
///   with `EACCES`, so that nobody can plant a link there that redirects another user's write.
/// - **Atomic**: the bytes go to a temporary file beside the target, which is synced and renamed
///   over it, and the directory is synced: a crash leaves the old file or the new one.
/// - **Owner and mode**: the new file keeps the permission bits of the file it replaces and, where
///   the writer may set them (as root), its owner and group; a new file gets `newFileMode`.
/// - **Read-only files** are not replaced (``checkWritable(_:)``): a file whose mode lets nobody
///   write it (`chmod 400`), for every writer, root included, and a file this writer could not
///   open for writing, although the directory would allow the rename.
/// - **Only regular files** are replaced.
/// - **Temporary files** are named `.<name>.tmp-<pid>-<random>`, held with an exclusive `flock`
///   while they are written, and removed on failure; ``removeTemporaryFilesInProgress()`` removes
///   them when a signal ends the process, and ``removeAbandonedTemporaryFiles(of:)`` those a
///   process that died left behind.
///
/// ```swift
/// let target = try FileReplacement.target(of: path)
/// try FileReplacement.replace(target, with: Array(text.utf8))
/// ```
package enum FileReplacement {
    /// The most bytes a temporary file's name adds to the name of the file it replaces:
    /// `.` before it and `.tmp-<pid>-<random>` after it.
    package static let temporaryNameOverhead = 1 + 5 + 10 + 1 + 13

    /// The file a write to `path` replaces: `path` itself, or the file its symbolic links lead to
    /// (which need not exist: a dangling link's target is created). Relative link contents are
    /// read from the link's directory.
    ///
    /// - Throws: `EACCES` for a link in a sticky, world-writable directory that belongs neither to
    ///   the writer nor to the directory's owner; `ELOOP` after 40 links; the `lstat` or
    ///   `readlink` failure otherwise.
    package static func target(of path: String) throws(SystemCallError) -> String {
        try followLinks(path, checkingOwners: true)
    }

    /// `path` with its final symbolic links followed, without the ownership rule of
    /// ``target(of:)``: where a write would land, for comparing identities.
    package static func followingLinks(_ path: String) throws(SystemCallError) -> String {
        try followLinks(path, checkingOwners: false)
    }

    private static func followLinks(_ path: String, checkingOwners: Bool) throws(SystemCallError) -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                if errno == ENOENT { return current }
                throw .last("lstat", path: current)
            }
            guard info.st_mode & S_IFMT == S_IFLNK else { return current }
            let directory = directory(of: current)
            if checkingOwners { try checkMayFollow(current, owner: info.st_uid, in: directory) }
            let destination = try readLink(current)
            current = destination.hasPrefix("/") ? destination : (directory == "/" ? "" : directory) + "/" + destination
        }
        throw SystemCallError(call: "follow the symbolic links", path: path, number: ELOOP)
    }

    /// The status of the file at `path`, a store's file resolved with ``target(of:)`` when it
    /// opened, or `nil` if there is none. A link made there since is followed only as
    /// ``target(of:)`` allows: a link that another user planted in a shared directory such as
    /// `/tmp` is refused (`EACCES`) rather than read through.
    package static func status(of path: String) throws(SystemCallError) -> stat? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .last("lstat", path: path)
        }
        guard info.st_mode & S_IFMT == S_IFLNK else { return info }
        let target = try target(of: path)
        guard stat(target, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .last("stat", path: target)
        }
        return info
    }

    /// Refuses to follow a link in a sticky, world-writable directory unless it belongs to this
    /// user or to the directory's owner (Linux's `fs.protected_symlinks`).
    private static func checkMayFollow(_ link: String, owner: uid_t, in directory: String) throws(SystemCallError) {
        var info = stat()
        guard stat(directory, &info) == 0 else { throw .last("stat", path: directory) }
        let shared = info.st_mode & S_ISVTX != 0 && info.st_mode & S_IWOTH != 0
        if shared, owner != geteuid(), owner != info.st_uid {
            throw SystemCallError(
                call: "follow", path: link, number: EACCES,
                detail: "a symbolic link owned by another user in a shared (sticky, world-writable) directory is not followed")
        }
    }

    private static func readLink(_ path: String) throws(SystemCallError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { throw .last("readlink", path: path) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Replaces the regular file at `path` (or creates it) with `bytes`, as the type's
    /// documentation says, and returns the new file's status. `path` is the file itself, resolved
    /// with ``target(of:)`` (a store resolves it once, when it opens); a link found there now, made
    /// since, is followed again only as ``target(of:)`` allows, so that a link planted in a shared
    /// directory after the store opened neither redirects the write nor lends it its target's
    /// owner and mode.
    @discardableResult
    package static func replace(_ path: String, with bytes: [UInt8], newFileMode: mode_t = 0o600) throws(SystemCallError) -> stat {
        let result = bytes.withUnsafeBytes { replace(path, $0, newFileMode: newFileMode) }
        return try result.get()
    }

    /// ``replace(_:with:newFileMode:)`` for `Data`.
    @discardableResult
    package static func replace(_ path: String, with data: Data, newFileMode: mode_t = 0o600) throws(SystemCallError) -> stat {
        let result = data.withUnsafeBytes { replace(path, $0, newFileMode: newFileMode) }
        return try result.get()
    }

    private static func replace(_ path: String, _ bytes: UnsafeRawBufferPointer, newFileMode: mode_t) -> Result<stat, SystemCallError> {
        Result { () throws(SystemCallError) -> stat in
            let path = try target(of: path)
            // `lstat`: a link made between the resolution and here is not a regular file, and is
            // refused below rather than followed.
            var existing = stat()
            let exists = lstat(path, &existing) == 0
            if !exists, errno != ENOENT { throw .last("lstat", path: path) }
            if exists {
                try checkRegular(existing, call: "replace", path: path)
                try checkWritable(path)
            }
            let (descriptor, temporary) = try createTemporaryFile(for: path)
            do throws(SystemCallError) {
                defer { close(descriptor) }
                if exists {
                    // Keep the owner when an administrator writes a user's file (only root may chown).
                    if existing.st_uid != geteuid() || existing.st_gid != getegid() {
                        _ = fchown(descriptor, existing.st_uid, existing.st_gid)
                    }
                    if fchmod(descriptor, existing.st_mode & 0o7777) != 0 { throw .last("fchmod", path: temporary) }
                } else if newFileMode != 0o600, fchmod(descriptor, newFileMode) != 0 {
                    throw .last("fchmod", path: temporary)
                }
                try writeAll(bytes, to: descriptor, path: temporary)
                guard fullSync(descriptor) else { throw .last("fsync", path: temporary) }
                var info = stat()
                guard fstat(descriptor, &info) == 0 else { throw .last("fstat", path: temporary) }
                guard rename(temporary, path) == 0 else { throw .last("rename", path: path) }
                // Again: the rename changes the file's status-change time on most systems. The
                // file is in place now, so a failure here keeps the first answer.
                _ = fstat(descriptor, &info)
                inProgress.withLock { _ = $0.paths.remove(temporary) }
                syncDirectory(of: path)
                return info
            } catch {
                unlink(temporary)
                inProgress.withLock { _ = $0.paths.remove(temporary) }
                throw error
            }
        }
    }

    /// Throws unless `info` is a regular file's: `EISDIR` for a directory, a typed refusal for a
    /// FIFO, socket or device.
    package static func checkRegular(_ info: stat, call: String, path: String) throws(SystemCallError) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw SystemCallError(call: call, path: path, number: EISDIR)
        case let kind: throw SystemCallError.notRegularFile(call: call, path: path, kind: kind)
        }
    }

    /// Throws unless the existing file at `path` may be written: refused (`EACCES`) when its mode
    /// grants write permission to nobody (`chmod 400`, `444`), for every writer, root included,
    /// although root could write it and the directory would allow the rename; and when this
    /// process (its effective user) could not open it for writing (the `access(2)` failure: its
    /// mode, a read-only file system, an immutable file).
    package static func checkWritable(_ path: String) throws(SystemCallError) {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o222 == 0 {
            throw SystemCallError(call: "access", path: path, number: EACCES, detail: "the file is read-only (no write permission in its mode)")
        }
        guard faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 else {
            let failure = SystemCallError.last("access", path: path)
            guard failure.number == EACCES || failure.number == EPERM || failure.number == EROFS else { throw failure }
            throw SystemCallError(call: "access", path: path, number: failure.number, detail: "the file is read-only")
        }
    }

    /// Throws `ENAMETOOLONG` unless every file the store at `path` may write beside it fits the
    /// file system's limit on names: its temporary files, and sidecars whose names are up to
    /// `longestSuffix` bytes longer than the file's. Stores call it when they open, so that a name
    /// that could never be written is refused then, rather than on every write.
    package static func checkNameLength(of path: String, longestSuffix: Int) throws(SystemCallError) {
        let directory = directory(of: path)
        let limit = pathconf(directory, Int32(_PC_NAME_MAX))
        let maximum = limit > 0 ? Int(limit) : 255
        let needed = name(of: path).utf8.count + max(temporaryNameOverhead, longestSuffix)
        if needed > maximum {
            throw SystemCallError(
                call: "check the name", path: path, number: ENAMETOOLONG,
                detail: "the name is \(name(of: path).utf8.count) bytes; with the files written beside it "
                    + "(up to \(max(temporaryNameOverhead, longestSuffix)) bytes longer) it must fit in \(maximum)")
        }
    }

    // MARK: Temporary files

    /// The temporary files of the replacements under way in this process, and whether the
    /// process is ending (no new one may be made).
    private struct TemporaryFiles {
        var paths: Set<String> = []
        var refused = false
    }

    private static let inProgress = Mutex(TemporaryFiles())

    /// Removes the temporary files of the replacements under way in this process. For the
    /// cleanup of a process that a signal ends: the replaced files stay as they were. With
    /// `refusingNewOnes`, for the process's last moment, a replacement that starts afterwards (on
    /// another thread) fails instead of leaving a file: a temporary file is made and registered
    /// under the same lock that this removal takes.
    package static func removeTemporaryFilesInProgress(refusingNewOnes: Bool = false) {
        inProgress.withLock { files in
            if refusingNewOnes { files.refused = true }
            for path in files.paths { unlink(path) }
            files.paths = []
        }
    }

    /// How old an unlocked temporary file must be before it counts as abandoned: covers the moment
    /// between its creation and its writer's `flock`.
    static let abandonedAge: Int64 = 10

    /// Removes the temporary files that writers of `path` left behind when they died mid-write.
    ///
    /// Only files that are certainly abandoned are removed: named as this type names them, regular
    /// (not links), owned by this user, last modified more than `olderThan` seconds ago (default
    /// ten, ``abandonedAge``), not locked (every writer holds a lock on its temporary file until it
    /// is renamed), and not named after a process that is still running. A caller that holds the
    /// lock every writer of `path` takes around its replacement knows that no writer is between
    /// creating and locking its file, and passes `nil`: any age.
    package static func removeAbandonedTemporaryFiles(of path: String, olderThan age: Int64? = abandonedAge) {
        let directory = directory(of: path)
        let prefix = temporaryPrefix(for: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        for name in names where name.hasPrefix(prefix) {
            let candidate = (directory == "/" ? "" : directory) + "/" + name
            let owner = name.utf8.dropFirst(prefix.utf8.count).prefix { $0 != UInt8(ascii: "-") }
            if let pid = pid_t(String(decoding: owner, as: UTF8.self)), pid > 0, kill(pid, 0) == 0 || errno == EPERM { continue }
            let descriptor = open(candidate, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
                age.map({ Int64(now.tv_sec) - modificationSeconds(info) > $0 }) ?? true,
                flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            unlink(candidate)
        }
    }

    /// Creates the temporary file for a replacement of `path`, exclusively and owner-only, and
    /// locks it; it is known to ``removeTemporaryFilesInProgress()`` until the replacement ends.
    private static func createTemporaryFile(for path: String) throws(SystemCallError) -> (Int32, String) {
        let directory = directory(of: path)
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let temporary = (directory == "/" ? "" : directory) + "/" + temporaryPrefix(for: path) + "\(getpid())-" + random
        let descriptor = try inProgress.withLock { files throws(SystemCallError) -> Int32 in
            // The process is ending: a file made now would outlive the cleanup.
            guard !files.refused else { throw SystemCallError(call: "open", path: temporary, number: ECANCELED) }
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw .last("open", path: temporary) }
            files.paths.insert(temporary)
            return descriptor
        }
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
        return (descriptor, temporary)
    }

    private static func temporaryPrefix(for path: String) -> String {
        "." + name(of: path) + ".tmp-"
    }

    private static func modificationSeconds(_ info: stat) -> Int64 {
        info.modificationTime.seconds
    }

    // MARK: Paths and I/O

    /// The last component of `path`.
    package static func name(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.utf8.count > 1, trimmed.utf8.last == UInt8(ascii: "/") { trimmed.removeLast() }
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return String(trimmed) }
        return String(trimmed[trimmed.utf8.index(after: slash)...])
    }

    /// The directory part of `path`: `.` for a bare name, `/` for a file at the root.
    package static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.utf8.count > 1, trimmed.utf8.last == UInt8(ascii: "/") { trimmed.removeLast() }
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        let directory = String(trimmed[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let count = write(descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw .last("write", path: path)
            }
            written += count
        }
    }

    /// Flushes the file at `path` (not following a link) to stable storage; nothing when there is
    /// no file there.
    package static func syncFile(at path: String) throws(SystemCallError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw .last("open", path: path)
        }
        defer { close(descriptor) }
        guard fullSync(descriptor) else { throw .last("fsync", path: path) }
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

    /// The longest suffix ``moveAside(_:)`` adds to a file's name.
    package static let longestMovedAsideSuffix = ".corrupted-".utf8.count + 16 + 5

    /// Renames the damaged file at `path` to `<name>.corrupted-<YYYYMMDDTHHMMSSZ>` beside it
    /// (`-2`, `-3`… when that exists), so that nothing is lost, and makes the rename durable.
    /// The one name every backend gives a file it keeps aside. Returns the new path.
    package static func moveAside(_ path: String) throws(SystemCallError) -> String {
        let base = path + ".corrupted-" + ExactTimestamp.compactUTC(secondsSinceReferenceDate: Date().timeIntervalSinceReferenceDate)
        var target = base
        var suffix = 2
        var info = stat()
        while lstat(target, &info) == 0 {
            target = base + "-\(suffix)"
            suffix += 1
        }
        guard rename(path, target) == 0 else { throw .last("rename", path: path) }
        syncDirectory(of: path)
        return target
    }

    /// Makes a rename in the directory of `path` durable. Where the directory cannot be opened
    /// (one this user may write but not read, or no descriptor left in the process), every file
    /// system is synced instead (`sync`), rare and slow but durable. A failure of the directory's
    /// own sync (`EIO`, a failing disk) is not reported: the rename, the commit point, has
    /// happened, and the new file is what every reader sees.
    package static func syncDirectory(of path: String) {
        let descriptor = open(directory(of: path), O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard descriptor >= 0 else {
            sync()
            return
        }
        defer { close(descriptor) }
        while fsync(descriptor) != 0, errno == EINTR {}
    }
}
