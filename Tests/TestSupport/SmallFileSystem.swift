import Foundation

import AnyDefaultsPlatform

/// A small file system of its own (a tmpfs of a given size, mounted on a fresh temporary
/// directory), for tests of what a store does when the disk is full. Mounting needs root on Linux:
/// elsewhere, or without the permission, ``init(bytes:)`` throws, and the test fails, loudly: a
/// full-disk test that could not run must not pass.
public final class SmallFileSystem {
    public let directory: TemporaryDirectory

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public init(bytes: Int) throws {
        directory = try TemporaryDirectory(prefix: "anydefaults-full")
        #if os(Linux)
        let result = try ChildProcess.runSystem("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes),mode=0777", "tmpfs", directory.path])
        guard result.status == 0 else {
            directory.remove()
            throw Unavailable(description: "Cannot mount a tmpfs of \(bytes) bytes (needs root): \(result.standardError)")
        }
        #else
        directory.remove()
        throw Unavailable(description: "Full-disk tests mount a tmpfs, which needs Linux.")
        #endif
    }

    public var path: String { directory.path }
    public func path(_ name: String) -> String { directory.path(name) }

    /// Fills the file system with a file of zeros until no byte is left.
    public func fill() {
        let descriptor = open(directory.path("filler"), O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        for size in [4096, 512, 1] {
            while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, size) }) == size {}
        }
    }

    /// Makes the file system read-only (`mount -o remount,ro`): no one, root included, can write
    /// it from then on (EROFS). Throws if it cannot.
    public func remountReadOnly() throws {
        let result = try ChildProcess.runSystem("/bin/mount", ["-o", "remount,ro", directory.path])
        guard result.status == 0 else {
            throw Unavailable(description: "Cannot remount \(directory.path) read-only: \(result.standardError)")
        }
    }

    /// Bytes still free.
    public var available: Int {
        var fileSystem = statvfs()
        guard statvfs(directory.path, &fileSystem) == 0 else { return 0 }
        return Int(fileSystem.f_bavail) * Int(fileSystem.f_frsize)
    }

    deinit {
        _ = try? ChildProcess.runSystem("/bin/umount", ["-l", directory.path])
        directory.remove()
    }
}
