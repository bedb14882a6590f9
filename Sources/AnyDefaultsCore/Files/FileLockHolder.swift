import Foundation

import AnyDefaultsPlatform

/// What the processes holding a lock on a file are doing, as far as the system tells: for
/// ``FileLockWait`` and SQLite's busy handler, which give up at their timeout on a holder that is
/// stuck, not on one that is working (see ``LockHolderPatience``).
///
/// A process killed while it holds an `flock` keeps it until the kernel has closed its files, and
/// on Linux that can take seconds: the files' final release runs in reverse order of their
/// descriptors, and releasing an inotify instance (every process that watches a store has one,
/// opened after the store's lock file) waits for an RCU grace period, long under load. Such a
/// holder is not stuck: its lock is free as soon as its exit is through. Nor is a holder that
/// commits again and again while others wait: a waiter that polls can miss the short moments
/// the lock is free for seconds under load.
package enum FileLockHolder {
    /// What the processes holding a lock were doing at one look.
    package struct Look: Equatable, Sendable {
        /// The holders, other than this process; none if the lock was free at that moment.
        package var holders: Set<pid_t> = []
        /// Their threads' CPU time so far, in clock ticks.
        package var cpuTicks: UInt64 = 0
        /// The ones dying: every one of its threads is exiting or has SIGKILL pending, or it has
        /// no thread left in `/proc`.
        package var dyingHolders: Set<pid_t> = []
        /// Whether one of them is stopped: every one of its threads is stopped (SIGSTOP) or held by
        /// a debugger.
        package var stopped = false
        /// Whether a thread of one of them is on a CPU or waiting for the disk.
        package var running = false

        package init() {}
    }

    /// A look at the processes other than this one that hold the `flock` on the file open as
    /// `descriptor`; `nil` when the system does not tell (a holder in another PID namespace, or
    /// no `/proc`) or this process holds it.
    package static func look(atLockOn descriptor: Int32) -> Look? {
        #if os(Linux)
        var info = stat()
        guard fstat(descriptor, &info) == 0, let holders = holders(of: info, kinds: ["FLOCK"]) else { return nil }
        // Held through another descriptor of this process: nothing another process does.
        return holders == [getpid()] ? nil : look(at: holders)
        #else
        return nil
        #endif
    }

    /// A look at the processes other than this one that hold an exclusive lock of any kind
    /// (`flock`, POSIX or open-file-description record locks, as SQLite takes in `-shm`) on the
    /// file at `path`. Waiters that do not know which holder blocks them (SQLite's busy handler)
    /// ask this. Every connection to a SQLite store holds a shared lock on its `-shm` while it is
    /// open, and waiters hold none: only exclusive ones (the writer's, the checkpointer's) block
    /// a writer.
    package static func look(atHoldersOfLocksOn path: String) -> Look? {
        #if os(Linux)
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return look(at: holders(of: info, kinds: ["FLOCK", "POSIX", "OFDLCK"], exclusive: true))
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// `PF_EXITING`, in the flags of `/proc/PID/stat`: the thread is in `exit`.
    private static let exiting: UInt64 = 0x4
    /// SIGKILL's bit in the pending-signal masks of `/proc/PID/status`.
    private static let killBit: UInt64 = 1 << (UInt64(SIGKILL) - 1)

    /// The PIDs of the processes holding locks of `kinds` on the file `info` describes (only
    /// exclusive ones if `exclusive`), from `/proc/locks`
    /// (`1: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF`); `nil` if a holder is in another PID
    /// namespace (PID 0, or -1 for an open file description's lock) or `/proc/locks` cannot be read.
    ///
    /// `/proc/locks` names the file system's device, which is not always the one `stat` reports
    /// (Btrfs subvolumes, some overlay mounts): when no line names the device and inode, the lines
    /// that name the inode on any device are taken.
    static func holders(of info: stat, kinds: Set<Substring>, exclusive: Bool = false) -> Set<pid_t>? {
        guard let locks = contents(of: "/proc/locks") else { return nil }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        let inode = ":" + String(info.st_ino)
        let file = hex(major) + ":" + hex(minor) + inode
        var exact: Set<pid_t> = []
        var byInode: Set<pid_t> = []
        var foreign = (exact: false, byInode: false)
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ")
            // Waiters' lines have "->" in the second field.
            guard fields.count >= 6, kinds.contains(fields[1]), !exclusive || fields[3] == "WRITE", fields[5].hasSuffix(inode),
                let pid = pid_t(fields[4])
            else { continue }
            let isExact = fields[5] == file
            if pid <= 0 {
                if isExact { foreign.exact = true } else { foreign.byInode = true }
            } else if isExact {
                exact.insert(pid)
            } else {
                byInode.insert(pid)
            }
        }
        if !exact.isEmpty || foreign.exact { return foreign.exact ? nil : exact }
        return foreign.byInode ? nil : byInode
    }

    /// What the processes `pids`, other than this one, are doing; `nil` if `pids` is, or if one
    /// of them cannot be looked at (`/proc` hides other users' processes, with `hidepid`).
    private static func look(at pids: Set<pid_t>?) -> Look? {
        guard let pids else { return nil }
        let others = pids.subtracting([getpid()])
        var look = Look()
        look.holders = others
        for pid in others {
            guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !tasks.isEmpty else {
                // Gone, its lock still listed: its exit is all but through. Hidden: no telling.
                guard kill(pid, 0) != 0, errno == ESRCH else { return nil }
                look.dyingHolders.insert(pid)
                continue
            }
            var exiting = 0
            var halted = 0
            var read = 0
            var killed = false
            for task in tasks {
                let path = "/proc/\(pid)/task/\(task)"
                // A thread gone since the listing has exited.
                guard let thread = thread(path) else {
                    exiting += 1
                    continue
                }
                read += 1
                look.cpuTicks &+= thread.cpuTicks
                if thread.state == "R" || thread.state == "D" { look.running = true }
                if thread.state == "T" || thread.state == "t" { halted += 1 }
                if thread.exiting {
                    exiting += 1
                } else if killPending(path) {
                    // SIGKILL ends the whole process: one thread that has it pending is enough.
                    (exiting, killed) = (exiting + 1, true)
                }
            }
            if killed || exiting == tasks.count { look.dyingHolders.insert(pid) }
            if read > 0, halted == read { look.stopped = true }
        }
        return look
    }

    /// The state, the exit flag and the CPU time of the thread whose `/proc` directory is `path`.
    private static func thread(_ path: String) -> (state: Character, exiting: Bool, cpuTicks: UInt64)? {
        guard let stat = contents(of: path + "/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // After the command name: state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt,
        // cminflt, majflt, cmajflt, utime, stime.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let state = fields[0].first, let flags = UInt64(fields[6]),
            let user = UInt64(fields[11]), let system = UInt64(fields[12])
        else { return nil }
        return (state, flags & exiting != 0, user &+ system)
    }

    /// Whether the thread whose `/proc` directory is `path` has SIGKILL pending.
    private static func killPending(_ path: String) -> Bool {
        guard let status = contents(of: path + "/status") else { return false }
        for line in status.split(separator: "\n") where line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") {
            let mask = line.drop(while: { $0 != ":" }).dropFirst().trimmingCharacters(in: .whitespaces)
            if let pending = UInt64(mask, radix: 16), pending & killBit != 0 { return true }
        }
        return false
    }

    /// `%02x`, as `/proc/locks` writes device numbers.
    private static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return text.count < 2 ? "0" + text : text
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
