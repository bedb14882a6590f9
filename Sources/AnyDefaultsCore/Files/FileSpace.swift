import AnyDefaultsPlatform

/// Disk blocks given to a file before it is written through a memory map or filled later, so
/// that a full disk is an error at that moment and not a SIGBUS (a sparse file's page dirtied
/// through a map) or a failed write afterwards.
package enum FileSpace {
    /// Gives the first `bytes` of the file open as `descriptor` their blocks, extending the file
    /// to that size if it is shorter: `posix_fallocate` where the system has it, else by writing
    /// zeros after the file's end. `0`, or the `errno` of the failure (`ENOSPC` on a full disk).
    package static func allocate(_ descriptor: Int32, bytes: Int) -> Int32 {
        #if canImport(Glibc)
        let code = posix_fallocate(descriptor, 0, off_t(bytes))
        // A file system that cannot allocate ahead (EOPNOTSUPP) takes the zeros below instead.
        if code == 0 || code == ENOSPC || code == EDQUOT || code == EFBIG { return code }
        #endif
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return errno }
        var written = Int(info.st_size)
        let chunk = [UInt8](repeating: 0, count: 64 << 10)
        while written < bytes {
            let count = chunk.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, min(chunk.count, bytes - written), off_t(written)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return count < 0 ? errno : ENOSPC }
            written += count
        }
        return 0
    }
}
