import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing a file as a whole: into a temporary file beside it, flushed to disk, then renamed
/// over it, so that a failure (or a kill) leaves either the old file or the complete new one.
/// A file that existed keeps its permissions; a new one gets the usual 0666 less the umask.
enum OutputFile {
    static func write(_ data: Data, to path: String) throws(CommandFailure) {
        func failure(_ action: String, _ code: Int32 = errno) -> CommandFailure {
            let status = code == EACCES || code == EPERM ? ExitStatus.permissionDenied : ExitStatus.cannotCreate
            return CommandFailure(status, "cannot write \(path): \(action): \(String(cString: strerror(code)))")
        }
        var existing = stat()
        let exists = stat(path, &existing) == 0
        if exists, existing.st_mode & S_IFMT == S_IFDIR {
            throw CommandFailure(ExitStatus.cannotCreate, "cannot write \(path): it is a directory")
        }
        let directory = (path as NSString).deletingLastPathComponent
        var template = Array(((directory.isEmpty ? "." : directory) + "/.anydefaults-export-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else { throw failure("cannot create a file in \(directory.isEmpty ? "." : directory)") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        let mode: mode_t
        if exists {
            mode = existing.st_mode & 0o7777
        } else {
            let mask = umask(0)
            umask(mask)
            mode = 0o666 & ~mask
        }
        fchmod(descriptor, mode)
        let written = data.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let count = writeBytes(descriptor, base + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += count
            }
            return 0
        }
        if written != 0 {
            close(descriptor)
            throw failure("write failed", written)
        }
        if fsync(descriptor) != 0 {
            let code = errno
            close(descriptor)
            throw failure("fsync failed", code)
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else { throw failure("cannot replace it") }
        renamed = true
    }
}

/// The system's `write(2)` (inside ``OutputFile`` the name is its own method).
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
