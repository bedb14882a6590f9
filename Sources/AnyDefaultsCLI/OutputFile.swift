import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing an output file as a whole.
///
/// A regular file (new or existing) is replaced atomically: the data goes into a temporary file
/// beside it, is flushed to disk, then renamed over it, so that a failure or a kill leaves either
/// the old file or the complete new one. An existing file keeps its permissions; a new one gets
/// 0666 less the umask. A symbolic link is followed (the file it names is replaced, the link
/// stays). Anything else that exists and is not a directory (`/dev/stdout`, a FIFO) is written
/// in place, never replaced.
enum OutputFile {
    static func write(_ data: Data, to path: String) throws(CommandFailure) {
        func failure(_ action: String, _ code: Int32 = errno) -> CommandFailure {
            let status = code == EACCES || code == EPERM ? ExitStatus.permissionDenied : ExitStatus.cannotCreate
            return CommandFailure(status, "cannot write \(path): \(action): \(String(cString: strerror(code)))")
        }
        var existing = stat()
        let exists = stat(path, &existing) == 0
        let kind = existing.st_mode & S_IFMT
        if exists, kind == S_IFDIR {
            throw CommandFailure(ExitStatus.cannotCreate, "cannot write \(path): it is a directory")
        }
        if exists, kind != S_IFREG {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure("cannot open it") }
            defer { close(descriptor) }
            let code = writeAll(data, to: descriptor)
            if code != 0 { throw failure("write failed", code) }
            return
        }
        // Replace the file a symbolic link names, not the link.
        let target = exists ? (realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path) : path
        let directory = (target as NSString).deletingLastPathComponent
        let folder = directory.isEmpty ? "." : directory
        var template = Array((folder + "/.anydefaults-export-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else { throw failure("cannot create a file in \(folder)") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        fchmod(descriptor, exists ? existing.st_mode & 0o7777 : 0o666 & ~currentUmask())
        var code = writeAll(data, to: descriptor)
        if code == 0, fsync(descriptor) != 0 { code = errno }
        close(descriptor)
        if code != 0 { throw failure("write failed", code) }
        guard rename(temporary, target) == 0 else { throw failure("cannot replace it") }
        renamed = true
    }

    /// Writes every byte of `data`; returns 0, or the `errno` of the failure.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Int32 {
        data.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let count = systemWrite(descriptor, base + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += count
            }
            return 0
        }
    }

    /// The process's umask (reading it means setting it, so it is set back at once).
    private static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }
}

/// The system's `write(2)` (inside ``OutputFile`` the name is its own method).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
