import AnyDefaultsCore
import CLMDB
import Foundation

import AnyDefaultsPlatform

/// The files LMDB creates and opens in a store's directory (`data.mdb`, `lock.mdb`), prepared
/// before LMDB opens them by name.
///
/// - **No links.** LMDB opens them following symbolic links, so a link planted there would have
///   it write its lock table or data through the link, over another file. Each is opened here
///   with `O_NOFOLLOW` (created if missing) and must be a regular file.
/// - **The store's owner.** Created by root in a user's store, they are given the directory's
///   owner, as the files a user's program must reopen.
/// - **Room for the lock table.** LMDB sizes `lock.mdb` with `ftruncate` and writes it through a
///   memory map: on a full disk, touching a page that cannot be allocated stops the process with
///   SIGBUS. Its blocks are allocated here first (`fallocate`, keeping the size LMDB chooses), so a
///   full disk is a `storageFull` error instead.
///
/// Closing a descriptor of `lock.mdb` drops every POSIX lock this process holds on it: this runs
/// only while no environment of this process has the store open.
enum LMDBFiles {
    /// Bytes allocated for `lock.mdb`: LMDB's table for its default 126 readers takes 8 KiB.
    static let lockTableReserve: Int64 = 64 << 10

    /// Prepares `data.mdb` and `lock.mdb` in the store's directory `path`; returns whether the store
    /// can only be read: its data file exists but cannot be written (its mode, a read-only file
    /// system), or its lock file can be neither written nor created on a read-only file system
    /// (where LMDB does without one for an environment opened read-only).
    static func prepare(directory path: String) throws(DefaultsError) -> Bool {
        var directory = stat()
        guard stat(path, &directory) == 0 else { throw DefaultsError.lmdb(errno, "inspect the store's directory", path: path) }
        let data = try prepare(path + "/data.mdb", owner: directory, mode: 0o600, reserve: 0)
        let lock = try prepare(path + "/lock.mdb", owner: directory, mode: data.mode, reserve: lockTableReserve)
        return data.access == .readOnly || lock.access == .readOnlyFileSystem
    }

    /// How a file beside the store could be opened.
    private enum Access {
        case readWrite
        /// It exists, and can be read but not written.
        case readOnly
        /// It is missing and cannot be created (a directory that cannot be written): LMDB
        /// reports it when it opens the store.
        case cannotCreate
        /// It can be neither written nor created: the file system is read-only.
        case readOnlyFileSystem
    }

    /// Opens (or creates) the file at `path` without following a link and checks it; returns its
    /// permission bits and how it could be opened.
    private static func prepare(
        _ path: String, owner directory: stat, mode: mode_t, reserve: Int64
    ) throws(DefaultsError) -> (mode: mode_t, access: Access) {
        var created = true
        var access = Access.readWrite
        var descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        if descriptor < 0, errno == EEXIST {
            created = false
            descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            // A read-only store is opened read-only; its files are checked all the same.
            if descriptor < 0, errno == EACCES || errno == EROFS || errno == EPERM {
                let reason = errno
                descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
                access = reason == EROFS ? .readOnlyFileSystem : .readOnly
            }
        }
        guard descriptor >= 0 else {
            let code = errno
            guard code != ELOOP else {
                throw DefaultsError(
                    .permissionDenied, "A symbolic link is where the store's \((path as NSString).lastPathComponent) belongs; remove it.",
                    backend: LMDBProvider.backend, path: path, cause: LMDBFailure(code))
            }
            if code == EROFS { return (mode, .readOnlyFileSystem) }
            if code == EACCES { return (mode, .cannotCreate) }
            throw DefaultsError.lmdb(code, "open \((path as NSString).lastPathComponent)", path: path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw DefaultsError.lmdb(errno, "inspect the store's files", path: path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw DefaultsError(
                .invalidConfiguration, "The store's \((path as NSString).lastPathComponent) is not a regular file.",
                backend: LMDBProvider.backend, path: path)
        }
        if created {
            _ = fchmod(descriptor, mode)
            if geteuid() == 0, directory.st_uid != 0 { _ = fchown(descriptor, directory.st_uid, directory.st_gid) }
        } else if access == .readWrite, info.st_mode & 0o222 == 0 {
            // Root opens any file for writing: a file whose mode grants no write is read-only for
            // root too, as the other file backends treat it (Docs/Reliability.md).
            access = .readOnly
        }
        if reserve > 0, access == .readWrite { try allocate(descriptor, bytes: reserve, path: path) }
        return (info.st_mode & 0o777, access)
    }

    /// Allocates the first `bytes` of the file's blocks without changing its size.
    private static func allocate(_ descriptor: Int32, bytes: Int64, path: String) throws(DefaultsError) {
        #if os(Linux)
        // Keeping the size: LMDB sets it itself (and takes a larger file for more readers).
        let code = anydefaults_allocate_keeping_size(descriptor, bytes) == 0 ? 0 : errno
        #else
        var store = fstore_t(fst_flags: UInt32(F_ALLOCATEALL), fst_posmode: F_PEOFPOSMODE, fst_offset: 0, fst_length: off_t(bytes), fst_bytesalloc: 0)
        let code = fcntl(descriptor, F_PREALLOCATE, &store) == 0 ? 0 : errno
        #endif
        switch code {
        case 0: return
        case ENOSPC, EDQUOT, EFBIG:
            throw DefaultsError(
                .storageFull, "The disk is full: there is no room for the store's lock file (lock.mdb).",
                backend: LMDBProvider.backend, path: path, cause: LMDBFailure(code))
        default:
            // The file system cannot allocate ahead (EOPNOTSUPP): ask it how much room is left.
            var fileSystem = statvfs()
            if fstatvfs(descriptor, &fileSystem) == 0, Int64(fileSystem.f_bavail) * Int64(fileSystem.f_frsize) < bytes {
                throw DefaultsError(
                    .storageFull, "The disk is full: there is no room for the store's lock file (lock.mdb).",
                    backend: LMDBProvider.backend, path: path)
            }
        }
    }
}
