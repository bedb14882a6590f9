import AnyDefaultsCore
import CLMDB

import AnyDefaultsPlatform

/// A status code returned by LMDB (its own codes or an `errno` value): the cause attached to a
/// ``DefaultsError`` of this backend.
public struct LMDBFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code: one of LMDB's `MDB_*` codes or an `errno` value.
    public let code: Int32

    public init(_ code: Int32) { self.code = code }

    public var description: String {
        let text = mdb_strerror(code).map { String(cString: $0) } ?? "unknown error"
        return "\(text) (\(code))"
    }

    static let mapFull = LMDBFailure(MDB_MAP_FULL)
}

/// The former name of ``LMDBFailure``.
@available(*, deprecated, renamed: "LMDBFailure")
public typealias LMDBStatus = LMDBFailure

extension DefaultsError {
    /// The error for LMDB status `code`, returned by `action` (a phrase such as "open the store").
    static func lmdb(_ code: Int32, _ action: String, key: String? = nil, path: String) -> DefaultsError {
        let status = LMDBFailure(code)
        let errorCode: Code
        var message = "Could not \(action): \(status)."
        switch code {
        case MDB_INVALID:
            errorCode = .corrupted
            message = "Could not \(action): the data file is not an LMDB database, or its header is damaged."
        case MDB_VERSION_MISMATCH:
            errorCode = .incompatibleFormat
            message = "Could not \(action): the store was written by an incompatible version of LMDB."
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND:
            errorCode = .corrupted
            message = "Could not \(action): the LMDB data file is damaged."
        case MDB_MAP_FULL, ENOSPC, EDQUOT, EFBIG:
            errorCode = .storageFull
        case EIO where fileSystemIsFull(path):
            // LMDB reports a short write (the disk filled part-way) as EIO.
            errorCode = .storageFull
            message = "Could not \(action): the disk is full."
        case MDB_READERS_FULL:
            errorCode = .busy
            message = "Could not \(action): every LMDB reader slot is in use."
        case ENOENT, ENOTDIR:
            errorCode = .notFound
        case EACCES, EPERM, EROFS:
            errorCode = .permissionDenied
        case EAGAIN, EBUSY:
            errorCode = .busy
        case MDB_BAD_VALSIZE:
            errorCode = key == nil ? .invalidValue : .invalidKey
        case MDB_PANIC:
            errorCode = .ioFailure
            message = "Could not \(action): LMDB hit a fatal error; close and reopen the store."
        case EIO, ENOMEM:
            errorCode = .ioFailure
        default:
            errorCode = code < 0 ? .internalError : .ioFailure
        }
        return DefaultsError(errorCode, message, backend: LMDBProvider.backend, key: key, path: path, cause: status)
    }

    /// Whether the file system holding `path` has (almost) no room left: under 1 MiB, or under
    /// 1% of its size, for an unprivileged process.
    private static func fileSystemIsFull(_ path: String) -> Bool {
        var fileSystem = statvfs()
        guard statvfs(path, &fileSystem) == 0 else { return false }
        let available = UInt64(fileSystem.f_bavail) &* UInt64(fileSystem.f_frsize)
        let size = UInt64(fileSystem.f_blocks) &* UInt64(fileSystem.f_frsize)
        return available < 1 << 20 || available < size / 100
    }

    /// The error for a stored record that cannot be decoded.
    static func undecodable(_ failure: BinaryCodecError, key: String?, path: String) -> DefaultsError {
        DefaultsError(
            failure.kind == .unknownVersion ? .incompatibleFormat : .corrupted,
            "A stored record cannot be read: \(failure.message)",
            backend: LMDBProvider.backend, key: key, path: path, cause: failure)
    }

    /// Whether this error is LMDB reporting a full map, which the provider answers by growing it.
    var isMapFull: Bool {
        (cause as? LMDBFailure) == .mapFull
    }
}
