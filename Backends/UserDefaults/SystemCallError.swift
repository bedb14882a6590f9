#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AnyDefaultsCore

/// A failed system call, kept as the cause of a ``AnyDefaultsCore/DefaultsError``.
struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, for example `"rename"`.
    var call: String
    /// The `errno` it set.
    var code: Int32

    /// The error for the current `errno`.
    static func current(_ call: String) -> SystemCallError {
        SystemCallError(call: call, code: errno)
    }

    var description: String {
        "\(call): \(String(cString: strerror(code))) (errno \(code))"
    }

    /// The ``AnyDefaultsCore/DefaultsError/Code-swift.struct`` that fits this failure.
    var defaultsCode: DefaultsError.Code {
        switch code {
        case EACCES, EPERM, EROFS: .permissionDenied
        case ENOSPC, EDQUOT: .storageFull
        case ENOENT, ENOTDIR: .notFound
        case EWOULDBLOCK: .busy
        default: .ioFailure
        }
    }
}
