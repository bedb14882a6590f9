import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// The checks made on a store's path before SQLite sees it, so that a missing directory or a
/// denied permission is reported clearly (naming the path) instead of as SQLite's "unable to open
/// database file", and so that a new store is created readable by its owner only.
enum SQLiteStoreFile {
    /// How a store file can be opened.
    enum Access {
        /// Read and written.
        case readWrite
        /// Read only: the file, or its directory (where SQLite keeps `-wal` and `-shm`), cannot
        /// be written, but SQLite's files beside it can be used or made.
        case readOnly
        /// Read only, as a file no one changes (`immutable=1`): the directory cannot be written
        /// and holds no `-wal` or `-shm`, so no one can write the store in WAL mode.
        case immutable
    }

    /// Checks `path` and returns it as an absolute path, with the file's identity and how it can
    /// be opened; creates an empty file with mode 0600 if none exists (and `creating`). SQLite
    /// gives the `-wal` and `-shm` files it creates the mode of the store file, so those are
    /// owner-only too. A store that can be read but not written opens read-only.
    static func prepare(
        _ path: String, creating: Bool = true
    ) throws(DefaultsError) -> (path: String, id: FileID, access: Access) {
        guard !path.isEmpty else {
            throw DefaultsError(.invalidConfiguration, "The store path is empty.", backend: SQLiteProvider.backend)
        }
        // Absolute, so SQLite never reads a name such as ":memory:" as one of its special names.
        let given = URL(fileURLWithPath: (path as NSString).expandingTildeInPath).standardizedFileURL.path
        // SQLite follows a link at the path and keeps its journals beside the file the link leads
        // to; the store's own files (change counter, reserve) and checks go there too, so that
        // every spelling of the store shares them.
        let absolute = (try? FileReplacement.followingLinks(given)).map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? given
        let directory = (absolute as NSString).deletingLastPathComponent
        let directoryIsWritable = try checkDirectory(directory)
        do {
            try FileReplacement.checkNameLength(of: absolute, longestSuffix: SQLiteSidecars.longestSuffix)
        } catch {
            throw DefaultsError(
                .invalidConfiguration, "The name of the store file is too long for the files SQLite and this store write beside it.",
                backend: SQLiteProvider.backend, path: absolute, cause: error)
        }

        var info = stat()
        if stat(absolute, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw DefaultsError(
                    .invalidConfiguration, "The store path names something that is not a regular file.",
                    backend: SQLiteProvider.backend, path: absolute)
            }
            guard access(absolute, R_OK) == 0 else {
                throw failure(errno, "The store file cannot be read", path: absolute)
            }
            // Root may write any file: a store whose mode grants no write is read-only for root
            // too, as the other file backends treat it (Docs/Reliability.md).
            let writable = access(absolute, W_OK) == 0 && (geteuid() != 0 || info.st_mode & 0o222 != 0)
            let mode: Access =
                if writable && directoryIsWritable { .readWrite }
                else if directoryIsWritable || hasSharedFiles(absolute) { .readOnly }
                else { .immutable }
            // Closing any descriptor of a file drops every POSIX lock this process holds on it,
            // SQLite's included; so the header is read only while no connection of this process
            // has the file open (the first one checked it).
            if info.st_size > 0, !SQLiteSharedFile.isOpen(identity(info)) { try checkHeader(absolute) }
            return (absolute, identity(info), mode)
        }
        guard errno == ENOENT, creating else { throw failure(errno, "The store file cannot be examined", path: absolute) }
        guard directoryIsWritable else {
            throw failure(
                EACCES,
                "The store's directory cannot be written, so the store cannot be created; SQLite also keeps its "
                    + "write-ahead log (-wal) and shared-memory index (-shm) files beside the store",
                path: directory)
        }
        try checkNoOrphanedLog(absolute)
        let descriptor = open(absolute, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {  // EEXIST: another process created it just now, which is fine.
            throw failure(errno, "The store file cannot be created", path: absolute)
        }
        guard stat(absolute, &info) == 0 else { throw failure(errno, "The store file cannot be examined", path: absolute) }
        return (absolute, identity(info), .readWrite)
    }

    /// Whether a `-wal` or `-shm` is beside the store (another process may be writing it).
    private static func hasSharedFiles(_ path: String) -> Bool {
        var info = stat()
        return lstat(path + "-wal", &info) == 0 || lstat(path + "-shm", &info) == 0
    }

    /// Refuses to create a store where its write-ahead log is left without it: the `-wal` holds
    /// commits not yet copied into the store file (a process died, then the file was deleted or
    /// moved). A new empty store there would take it over (SQLite deletes or replays a log it
    /// finds beside a database), so the log is kept and the path left alone.
    private static func checkNoOrphanedLog(_ path: String) throws(DefaultsError) {
        var info = stat()
        guard lstat(path + "-wal", &info) == 0, info.st_mode & S_IFMT != S_IFREG || info.st_size > 0 else { return }
        throw DefaultsError(
            .corrupted,
            "The store file is missing, but its write-ahead log (\((path as NSString).lastPathComponent)-wal) is there and "
                + "holds committed changes. Restore the store file beside it, or move the -wal (and -shm) away to start an "
                + "empty store. Nothing was changed.",
            backend: SQLiteProvider.backend, path: path)
    }

    /// The 16 bytes every SQLite database file starts with.
    static let header = Array("SQLite format 3\u{0}".utf8)

    /// Rejects a non-empty file that does not start with SQLite's header. SQLite itself takes a
    /// file shorter than its header (a store truncated to a few bytes) for an empty database, and
    /// the store would then be created over it: the damage would pass for an empty store.
    private static func checkHeader(_ path: String) throws(DefaultsError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(errno, "The store file cannot be read", path: path) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: header.count)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw failure(errno, "The store file cannot be read", path: path) }
            if count == 0 { break }
            filled += count
        }
        guard filled == header.count, bytes == header else {
            throw DefaultsError(
                .corrupted,
                "The file is not an SQLite database: its header is missing or damaged. It was left as it is.",
                backend: SQLiteProvider.backend, path: path)
        }
    }

    /// The identity of the file at `path` now, or `nil` if there is none.
    static func identity(atPath path: String) -> FileID? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return identity(info)
    }

    private static func identity(_ info: stat) -> FileID {
        info.fileID
    }

    /// Checks that `directory` exists and can be searched; returns whether it can be written.
    private static func checkDirectory(_ directory: String) throws(DefaultsError) -> Bool {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw failure(errno, "The store's directory cannot be used", path: directory)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw DefaultsError(
                .notFound, "The store's directory is not a directory.", backend: SQLiteProvider.backend,
                path: directory)
        }
        guard access(directory, X_OK) == 0 else {
            throw failure(errno, "The store's directory cannot be searched", path: directory)
        }
        return access(directory, W_OK) == 0
    }

    private static func failure(_ number: Int32, _ what: String, path: String) -> DefaultsError {
        // The system's words, not Foundation's bridged `NSError` text.
        let cause = SystemCallError(call: "open", path: path, number: number)
        let code: DefaultsError.Code
        let reason: String
        switch number {
        case ENOENT, ENOTDIR:
            (code, reason) = (.notFound, "it does not exist")
        case EACCES, EPERM, EROFS:
            (code, reason) = (.permissionDenied, "permission denied")
        default:
            (code, reason) = (.ioFailure, String(cString: strerror(number)))
        }
        return DefaultsError(code, "\(what): \(reason).", backend: SQLiteProvider.backend, path: path, cause: cause)
    }
}
