import AnyDefaultsCore
import CSQLite

import AnyDefaultsPlatform

/// A failure reported by the SQLite library: the cause attached to a ``DefaultsError``.
///
/// The message is SQLite's own (`sqlite3_errmsg`), which names tables and columns but never a
/// bound value, so it is safe to show.
public struct SQLiteFailure: Error, Sendable, CustomStringConvertible {
    /// The extended result code, for example `SQLITE_BUSY` (5) or `SQLITE_CORRUPT` (11).
    public var resultCode: Int32
    /// SQLite's text for the failure.
    public var message: String
    /// The operating system's `errno` for the last failed file operation, or 0.
    public var systemErrno: Int32

    public var description: String {
        var text = "SQLite result \(resultCode) (\(String(cString: sqlite3_errstr(resultCode)))): \(message)"
        if systemErrno != 0 { text += ", errno \(systemErrno)" }
        return text
    }
}

extension DefaultsError {
    /// The error for SQLite result `code`, raised while `action` (a phrase such as "Reading the
    /// value") was being done on the store at `path`.
    static func sqlite(
        _ code: Int32, db: OpaquePointer?, action: String, path: String, key: String? = nil
    ) -> DefaultsError {
        let failure = SQLiteFailure(
            resultCode: code,
            message: db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code)),
            systemErrno: db.map { sqlite3_system_errno($0) } ?? 0)
        let (kind, explanation) = classify(code & 0xFF, systemErrno: failure.systemErrno)
        return DefaultsError(
            kind, "\(action) failed: \(explanation)", backend: SQLiteProvider.backend,
            key: key, path: path, cause: failure)
    }

    private static func classify(_ primary: Int32, systemErrno: Int32) -> (Code, String) {
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return (.busy, "another connection kept the store locked for longer than the busy timeout (SQLiteProvider(busyTimeout:), or busytimeout=SECONDS in a store string).")
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return (.corrupted, "the file is not an SQLite database, or it is damaged. It was left as it is.")
        case SQLITE_FULL:
            return (.storageFull, "the disk or the file system is full.")
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
            return (.permissionDenied, "the store is read-only: its file, its directory or its file system cannot be written.")
        case SQLITE_TOOBIG:
            return (.invalidValue, "the value is larger than SQLite accepts (about 1 GB).")
        case SQLITE_CANTOPEN:
            switch systemErrno {
            case ENOENT: return (.notFound, "the file or its directory does not exist.")
            case ELOOP:
                // SQLite opens its files (-wal, -shm, -journal) without following links.
                return (.permissionDenied, "a symbolic link is where one of the store's files (-wal, -shm) belongs; remove it.")
            case EACCES, EPERM, EROFS: return (.permissionDenied, "access to the file or its directory was denied.")
            default: return (.ioFailure, "the file could not be opened.")
            }
        case SQLITE_IOERR, SQLITE_PROTOCOL:
            return (.ioFailure, "reading or writing the file failed.")
        case SQLITE_MISUSE:
            return (.closed, "the store is closed.")
        default:
            return (.internalError, "SQLite reported an unexpected failure.")
        }
    }
}
