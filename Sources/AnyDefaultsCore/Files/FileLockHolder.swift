import Foundation

import AnyDefaultsPlatform

/// Who holds the `flock` another process has on a file, as far as the system tells: for
/// ``FileLockWait``, which does not give up on a holder that is dying.
///
/// A process killed while it holds an `flock` keeps it until the kernel has closed its files, and
/// on Linux that can take seconds: the files' final release runs in reverse order of their
/// descriptors, and releasing an inotify instance (every process that watches a store has one,
/// opened after the store's lock file) waits for an RCU grace period, long under load. Such a
/// holder is not stuck: its lock is free as soon as its exit is through.
package enum FileLockHolder {
    /// Whether the process holding the `flock` on the file open as `descriptor` is dying: every
    /// one of its threads is exiting or has SIGKILL pending. `false` when that cannot be told
    /// (the lock is free, its holder is in another PID namespace, or the platform has no `/proc`).
    package static func isDying(lockOn descriptor: Int32) -> Bool {
        #if os(Linux)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return holders(of: info, kinds: ["FLOCK"]).contains(where: isDying(process:))
        #else
        return false
        #endif
    }

    /// Whether a process holding a lock of any kind (`flock`, POSIX or open-file-description
    /// record locks, as SQLite takes in `-shm`) on the file at `path` is dying. Waiters that do
    /// not know which holder blocks them (SQLite's busy handler) ask this.
    package static func isDying(holderOfLocksOn path: String) -> Bool {
        #if os(Linux)
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return holders(of: info, kinds: ["FLOCK", "POSIX", "OFDLCK"]).contains(where: isDying(process:))
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// `PF_EXITING`, in the flags of `/proc/PID/stat`: the thread is in `exit`.
    private static let exiting: UInt64 = 0x4
    /// SIGKILL's bit in the pending-signal masks of `/proc/PID/status`.
    private static let killBit: UInt64 = 1 << (UInt64(SIGKILL) - 1)

    /// The PIDs of the processes holding locks of `kinds` on the file `info` describes, from
    /// `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF`).
    static func holders(of info: stat, kinds: Set<Substring>) -> Set<pid_t> {
        guard let locks = contents(of: "/proc/locks") else { return [] }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        let file = hex(major) + ":" + hex(minor) + ":" + String(info.st_ino)
        var pids: Set<pid_t> = []
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ")
            // Waiters' lines have "->" in the second field; PID 0 is a holder in another namespace.
            guard fields.count >= 6, kinds.contains(fields[1]), fields[5] == file, let pid = pid_t(fields[4]), pid > 0 else { continue }
            pids.insert(pid)
        }
        return pids
    }

    /// Whether every thread of process `pid` is exiting or has SIGKILL pending.
    private static func isDying(process pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return !tasks.isEmpty && tasks.allSatisfy { isDying(task: "/proc/\(pid)/task/\($0)") }
    }

    /// `%02x`, as `/proc/locks` writes device numbers.
    private static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return text.count < 2 ? "0" + text : text
    }

    /// Whether the thread whose `/proc` directory is `path` is exiting or has SIGKILL pending.
    private static func isDying(task path: String) -> Bool {
        if let stat = contents(of: path + "/stat"), let close = stat.lastIndex(of: ")") {
            // After the command name: state, ppid, pgrp, session, tty_nr, tpgid, flags.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 6, let flags = UInt64(fields[6]), flags & exiting != 0 { return true }
        }
        guard let status = contents(of: path + "/status") else { return false }
        for line in status.split(separator: "\n") where line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") {
            let mask = line.drop(while: { $0 != ":" }).dropFirst().trimmingCharacters(in: .whitespaces)
            if let pending = UInt64(mask, radix: 16), pending & killBit != 0 { return true }
        }
        return false
    }

    /// The text of a (small, `/proc`) file, read to its end: `/proc` files report no size.
    private static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count < 16 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    #endif
}
