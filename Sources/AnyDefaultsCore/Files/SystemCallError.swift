import AnyDefaultsPlatform

/// A system call that failed: which one, on which path, and `errno`. File-based backends keep it
/// as the cause of the ``DefaultsError`` they throw.
///
/// ```swift
/// guard rename(temporary, path) == 0 else {
///     let failure = SystemCallError.last("rename", path: path)
///     throw DefaultsError(failure.code, "Cannot replace the file.", backend: "MyStore", path: path, cause: failure)
/// }
/// ```
package struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, for example `"rename"`.
    package var call: String
    /// The path it was called on, where there is one.
    package var path: String?
    /// The `errno` it set.
    package var number: Int32
    /// What went wrong in words, where `errno` alone would mislead (a FIFO where a file belongs
    /// is `EINVAL`, "not a regular file: a FIFO").
    package var detail: String?

    package init(call: String, path: String? = nil, number: Int32, detail: String? = nil) {
        self.call = call
        self.path = path
        self.number = number
        self.detail = detail
    }

    /// The refusal of something that is not a regular file (a FIFO, a socket, a device) where a
    /// file belongs; `kind` is its `st_mode & S_IFMT`. Its ``code`` is `invalidConfiguration`.
    package static func notRegularFile(call: String, path: String?, kind: mode_t) -> SystemCallError {
        let name =
            switch kind {
            case S_IFIFO: "a FIFO (named pipe)"
            case S_IFSOCK: "a socket"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFLNK: "a symbolic link"
            default: "not a file"
            }
        return SystemCallError(call: call, path: path, number: EINVAL, detail: "not a regular file: it is \(name)")
    }

    /// The failure of `call` with the current `errno`.
    package static func last(_ call: String, path: String? = nil) -> SystemCallError {
        SystemCallError(call: call, path: path, number: errno)
    }

    package var description: String {
        let reason = String(cString: strerror(number))
        let place = "\(call)\(path.map { "(\($0))" } ?? "")"
        guard let detail else { return "\(place): \(reason) (errno \(number))" }
        return "\(place): \(detail) (\(reason), errno \(number))"
    }

    /// The error code that fits this failure.
    package var code: DefaultsError.Code {
        number == EINVAL && detail != nil ? .invalidConfiguration : DefaultsError.Code(errno: number)
    }
}

extension DefaultsError.Code {
    /// The code that fits an `errno` value: permission, absence, a full disk, a lock held
    /// elsewhere, a directory where a file belongs, a name too long or a loop of links;
    /// ``ioFailure`` for anything else.
    package init(errno number: Int32) {
        switch number {
        case EACCES, EPERM, EROFS: self = .permissionDenied
        case ENOENT, ENOTDIR: self = .notFound
        case ENOSPC, EDQUOT, EFBIG: self = .storageFull
        case EAGAIN, EBUSY: self = .busy
        case EISDIR, ENAMETOOLONG, ELOOP: self = .invalidConfiguration
        default: self = .ioFailure
        }
    }
}
