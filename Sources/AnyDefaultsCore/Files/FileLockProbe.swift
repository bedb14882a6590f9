import AnyDefaultsPlatform

/// Asks whether another process holds a POSIX record lock on a file: how a backend tells whether
/// a database engine's shared file (SQLite's `-shm`, LMDB's `lock.mdb`) is in use elsewhere.
package enum FileLockProbe {
    /// Whether another process holds a lock (read or write) on the byte at `offset` of the file at
    /// `path`. A missing file is not locked; one that cannot be opened counts as locked. A link is
    /// not followed.
    ///
    /// Closing a file drops every POSIX lock this process holds on it, through any descriptor:
    /// call it only while this process has the file open nowhere else.
    ///
    /// ```swift
    /// if !FileLockProbe.isLockedByAnotherProcess(path + "-shm", byte: 128) { /* no one uses it */ }
    /// ```
    package static func isLockedByAnotherProcess(_ path: String, byte offset: Int64) -> Bool {
        var descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if descriptor < 0, errno == EACCES || errno == EROFS { descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard descriptor >= 0 else { return errno != ENOENT }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(offset)
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return true }
        return lock.l_type != Int16(F_UNLCK)
    }
}
