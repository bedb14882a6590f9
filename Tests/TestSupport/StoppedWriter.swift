import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// A child process that writes a store in a loop (`TestChild hold <store>`), stopped with SIGSTOP
/// while it holds the store's write lock, for tests of what other writers do then. Continued and
/// killed by ``end()``.
public final class StoppedWriter {
    public let process: Process

    /// Starts `TestChild hold store` and stops it at a moment `isHeld` says the write lock is held
    /// (tried at random moments, up to 200 times); `nil` if that never happened.
    public init?(store: String, isHeld: () -> Bool) throws {
        let (process, output, _) = try ChildProcess.start("TestChild", ["hold", store])
        self.process = process
        var ready = Data()
        while !ready.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            ready.append(chunk)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            usleep(UInt32.random(in: 5_000...60_000, using: &generator))
            kill(process.processIdentifier, SIGSTOP)
            usleep(2_000)
            if isHeld() { return }
            kill(process.processIdentifier, SIGCONT)
        }
        end()
        return nil
    }

    /// Continues and kills the process, and waits for it.
    public func end() {
        kill(process.processIdentifier, SIGCONT)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Whether another process holds the store's write lock: SQLite's (an exclusive lock on the
    /// WAL write-lock byte of `-shm`), the LMDB backend's (an `flock` on the store's directory) or
    /// the JSON file backend's (an `flock` on the `.lock` file beside it).
    public static func holdsWriteLock(scheme: String, location: String) -> Bool {
        if scheme == "sqlite" { return FileLockProbe.isLockedByAnotherProcess(location + "-shm", byte: 120) }
        let descriptor = scheme == "json"
            ? open(location + ".lock", O_RDONLY | O_CLOEXEC) : open(location, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(descriptor, LOCK_UN)
        return false
    }
}
