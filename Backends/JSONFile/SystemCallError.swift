import AnyDefaultsCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call that failed: which one, on which path, and `errno`. The cause inside the
/// ``AnyDefaultsCore/DefaultsError`` thrown for a file-system failure.
struct SystemCallError: Error, Sendable, CustomStringConvertible {
    var call: String
    var path: String
    var number: Int32

    /// The failure of `call` on `path`, with the current `errno`.
    static func last(_ call: String, _ path: String) -> SystemCallError {
        SystemCallError(call: call, path: path, number: errno)
    }

    var description: String {
        "\(call)(\(path)): \(String(cString: strerror(number))) (errno \(number))"
    }

    /// The error code this failure maps to.
    var code: DefaultsError.Code {
        switch number {
        case EACCES, EPERM, EROFS: .permissionDenied
        case ENOENT, ENOTDIR: .notFound
        case ENOSPC, EDQUOT, EFBIG: .storageFull
        case EISDIR: .invalidConfiguration
        default: .ioFailure
        }
    }
}
