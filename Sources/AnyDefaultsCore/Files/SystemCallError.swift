#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call that failed: which one, on which path, and `errno`. File-based backends keep it
/// as the cause of the ``DefaultsError`` they throw.
///
/// ```swift
/// guard rename(temporary, path) == 0 else {
///     let failure = SystemCallError.last("rename", path: path)
///     throw DefaultsError(failure.code, "Cannot replace the file.", backend: "MyStore", path: path, cause: failure)
/// }
/// ```
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, for example `"rename"`.
    public var call: String
    /// The path it was called on, where there is one.
    public var path: String?
    /// The `errno` it set.
    public var number: Int32

    public init(call: String, path: String? = nil, number: Int32) {
        self.call = call
        self.path = path
        self.number = number
    }

    /// The failure of `call` with the current `errno`.
    public static func last(_ call: String, path: String? = nil) -> SystemCallError {
        SystemCallError(call: call, path: path, number: errno)
    }

    public var description: String {
        "\(call)\(path.map { "(\($0))" } ?? ""): \(String(cString: strerror(number))) (errno \(number))"
    }

    /// The error code that fits this failure.
    public var code: DefaultsError.Code { DefaultsError.Code(errno: number) }
}

extension DefaultsError.Code {
    /// The code that fits an `errno` value: permission, absence, a full disk, a lock held
    /// elsewhere, a directory where a file belongs; ``ioFailure`` for anything else.
    public init(errno number: Int32) {
        switch number {
        case EACCES, EPERM, EROFS: self = .permissionDenied
        case ENOENT, ENOTDIR: self = .notFound
        case ENOSPC, EDQUOT, EFBIG: self = .storageFull
        case EAGAIN, EBUSY: self = .busy
        case EISDIR: self = .invalidConfiguration
        default: self = .ioFailure
        }
    }
}
