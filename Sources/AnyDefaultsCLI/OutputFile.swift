import AnyDefaults
import Foundation

import AnyDefaultsPlatform

/// Writing an output file as a whole, under the library's rule for files
/// (``FileReplacement``, Docs/Reliability.md "Links and ownership").
///
/// A regular file (new or existing) is replaced atomically: the data goes into a temporary file
/// beside it, is flushed to disk, then renamed over it, so that a failure, a kill or a signal
/// leaves either the old file or the complete new one (SIGINT, SIGTERM and SIGHUP remove the
/// temporary file; one left by a process that died is removed by the next export to that file).
/// An existing file keeps its owner and mode; a new one is readable by its owner only (`0600`),
/// like the stores it is exported from. A read-only file is not replaced. A symbolic link is
/// written through: the file it names is replaced, or created when the link dangles, and the link
/// stays; in a sticky, world-writable directory (`/tmp`) a link owned by another user is not
/// followed. Something else that exists (`/dev/stdout`, a pipe, a FIFO with a reader) is written
/// in place, never replaced, and never waited for: a FIFO nobody reads is refused.
enum OutputFile {
    /// Writes `data` to `path`, refusing a file that belongs to `store` (the store being
    /// exported): its data file, or a lock or journal beside it.
    static func write(_ data: Data, to path: String, store: DefaultsStoreIdentity?) throws(CommandFailure) {
        let path = HomePath.expanded(path)
        guard !path.isEmpty else { throw CommandFailure(ExitStatus.usage, "the output path is empty") }
        if Self.isDescriptorPath(path) { return try writeInPlace(data, to: path) }
        /// Runs a file operation, turning its failure into the command's.
        func attempt<T>(_ body: () throws(SystemCallError) -> T) throws(CommandFailure) -> T {
            do { return try body() } catch { throw failure(path, error) }
        }
        // First, so that a link planted in a shared directory is refused whatever it leads to.
        let target = try attempt { () throws(SystemCallError) in try FileReplacement.target(of: path) }
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists, info.st_mode & S_IFMT == S_IFDIR {
            throw CommandFailure(ExitStatus.cannotCreate, "cannot write \(path): it is a directory")
        }
        if let store, store.contains(file: path) {
            throw CommandFailure(
                ExitStatus.usage,
                "cannot write \(path): it is a file of the store being exported (\(store)); choose another output file")
        }
        if exists, info.st_mode & S_IFMT != S_IFREG { return try writeInPlace(data, to: path) }
        try attempt { () throws(SystemCallError) in
            try FileReplacement.checkNameLength(of: target, longestSuffix: 0)
            FileReplacement.removeAbandonedTemporaryFiles(of: target)
            try FileReplacement.replace(target, with: data)
        }
    }

    /// Whether `path` names an open descriptor (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`):
    /// written in place, since its "link" is no path that could be replaced.
    private static func isDescriptorPath(_ path: String) -> Bool {
        ["/dev/stdout", "/dev/stderr"].contains(path) || path.hasPrefix("/dev/fd/")
            || (path.hasPrefix("/proc/") && path.contains("/fd/"))  // portability-check: allowed, a name compared, never opened
    }

    /// Writes into what exists at `path` (a pipe, a terminal, a device), without creating,
    /// truncating or replacing anything. The open does not wait: a FIFO without a reader is
    /// refused (`ENXIO`) rather than blocking; the writes then wait for the reader as usual.
    private static func writeInPlace(_ data: Data, to path: String) throws(CommandFailure) {
        let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENXIO {
                throw CommandFailure(ExitStatus.cannotCreate, "cannot write \(path): no process is reading it (a FIFO without a reader)")
            }
            throw failure(path, .last("open", path: path))
        }
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFBLK {
            close(descriptor)
            throw CommandFailure(ExitStatus.cannotCreate, "cannot write \(path): it is a block device")
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        var code = writeAll(data, to: descriptor)
        if close(descriptor) != 0, code == 0, errno != EINTR { code = errno }
        if code != 0 { throw failure(path, SystemCallError(call: "write", path: path, number: code)) }
    }

    /// The failure for `error` on `path`: permission problems exit with 77, the rest with 73.
    private static func failure(_ path: String, _ error: SystemCallError) -> CommandFailure {
        let status = error.code == .permissionDenied ? ExitStatus.permissionDenied : ExitStatus.cannotCreate
        let reason = error.detail.map { "\(String(cString: strerror(error.number))): \($0)" } ?? String(cString: strerror(error.number))
        return CommandFailure(status, "cannot write \(path): \(error.call): \(reason)")
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
}

/// The system's `write(2)` (inside ``OutputFile`` the name is its own method).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
