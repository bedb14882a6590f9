import AnyDefaultsCore

import AnyDefaultsPlatform

/// The sidecar `<file>.lock` that writers of every process hold (with `flock`) around
/// read-modify-write, plus a generation counter in it that every write bumps.
///
/// A sidecar because the settings file itself is replaced by `rename` on every write, and a lock
/// on a replaced inode excludes no one. The generation catches a change that the file's stamp
/// can miss (an inode reused within one tick of a coarse mtime clock, with the same size).
///
/// Not thread-safe: it lives inside the store's disk mutex.
final class LockFile {
    let path: String
    private var descriptor: Int32 = -1

    init(path: String) {
        self.path = path
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Takes the exclusive lock, waiting up to `timeout`; `false` if another holder kept it that long.
    func lock(timeout: Duration) throws(SystemCallError) -> Bool {
        var wait = FileLockWait(timeout: timeout)
        while true {
            if descriptor < 0 { descriptor = try Self.open(path, O_RDWR | O_CREAT) }
            if try FileLockWait.tryLock(descriptor, path: path) {
                if isStillAtPath() { return true }
                // The lock file was removed or replaced since it was opened: lock the current one.
                close(descriptor)
                descriptor = -1
                continue
            }
            guard wait.pause(lockOn: descriptor) else { return false }
        }
    }

    func unlock() {
        if descriptor >= 0 { flock(descriptor, LOCK_UN) }
    }

    /// The generation recorded by the last writer; 0 if there is no lock file yet.
    func generation() -> UInt64 {
        var buffer = [UInt8](repeating: 0, count: 20)
        var count = -1
        if descriptor >= 0 {
            count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        } else {
            guard let reader = try? Self.open(path, O_RDONLY) else { return 0 }
            count = buffer.withUnsafeMutableBytes { pread(reader, $0.baseAddress, $0.count, 0) }
            close(reader)
        }
        guard count > 0 else { return 0 }
        return UInt64(String(decoding: buffer[..<count], as: UTF8.self)) ?? 0
    }

    /// Records `generation`; call it holding the lock. Not synced to disk: after a crash of the
    /// machine no process remembers an older generation, and the file stamp still differs.
    func setGeneration(_ generation: UInt64) {
        guard descriptor >= 0 else { return }
        var text = String(generation)
        text = String(repeating: "0", count: max(0, 20 - text.utf8.count)) + text
        _ = text.utf8CString.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 20, 0) }
    }

    /// Opens the lock file: never through a link, never blocking (a FIFO planted at the path
    /// would block an open for reading), and only if it is a regular file.
    private static func open(_ path: String, _ flags: Int32) throws(SystemCallError) -> Int32 {
        let descriptor = systemOpen(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else { throw .last("open", path: path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = SystemCallError.last("fstat", path: path)
            close(descriptor)
            throw failure
        }
        do {
            try FileReplacement.checkRegular(info, call: "open", path: path)
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    private func isStillAtPath() -> Bool {
        var opened = stat()
        var current = stat()
        return fstat(descriptor, &opened) == 0 && stat(path, &current) == 0
            && opened.st_dev == current.st_dev && opened.st_ino == current.st_ino
    }
}

/// The system's `open(2)`: inside ``LockFile`` the name is its own method.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
