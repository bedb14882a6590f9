import AnyDefaultsCore
import Foundation
import Synchronization

import AnyDefaultsPlatform

/// Makes sure that the write-ahead log (`-wal`) and shared-memory index (`-shm`) beside a store
/// belong to the store file about to be opened, before SQLite reads them.
///
/// SQLite finds those files by name, not by the file they were written for. When a store file is
/// replaced while it is in use (a backup renamed over it), the log of the file that was there
/// before stays beside the new one, and a connection that opens the new file would read the old
/// file's pages from it, or copy them into the new file: the restored keys would be gone. So the
/// store's counter file records which store file the log belongs to
/// (``SharedChangeCounter/storeIdentity``), and before a connection opens:
///
/// - if the record names this file (or nothing yet), the files are its own;
/// - else the store was replaced. While a connection of this process still has the replaced file
///   open, it is closed first (``SQLiteSharedFile/retireOthers(atPath:keeping:)``); while another
///   process still uses the old log (it holds SQLite's lock in `-shm`), the open waits for it to
///   notice the replacement and let go, up to the busy timeout, then fails with `busy`; once no one
///   uses them, the old `-wal` is moved aside (to `-wal.replaced-<time>`, never applied, never
///   deleted) and the `-shm` removed, and the record names this file.
enum SQLiteSidecars {
    /// Serialises the checks of this process: probing `-shm` opens and closes it, and closing any
    /// descriptor of a file drops every POSIX lock this process holds on it, SQLite's included.
    private static let checking = Mutex(())

    /// The byte of `-shm` that every connection using it keeps a read lock on (SQLite's unix VFS:
    /// `UNIX_SHM_DMS`, 120 + 8).
    private static let inUseLockOffset: Int64 = 128

    static func claim(
        path: String, file: FileID, counter: SharedChangeCounter, busyTimeout: Duration
    ) throws(DefaultsError) {
        let identity = SharedChangeCounter.identity(file)
        var wait = FileLockWait(timeout: busyTimeout, longestPause: .milliseconds(1))
        while true {
            var failure: SystemCallError?
            let settled = checking.withLock { _ -> Bool in
                guard let recorded = counter.storeIdentity, recorded != identity else { return true }
                if recorded == 0 { return counter.recordStoreIdentity(identity, replacing: 0) }
                // Replaced: what is beside the store belongs to the file that was there before.
                guard SQLiteSharedFile.retireOthers(atPath: path, keeping: file) else { return false }
                guard !FileLockProbe.isLockedByAnotherProcess(path + "-shm", byte: inUseLockOffset) else { return false }
                failure = moveAside(path)
                return failure == nil && counter.recordStoreIdentity(identity, replacing: recorded)
            }
            if let failure {
                // The old log stays where SQLite would apply it to this file: open nothing.
                throw DefaultsError(
                    failure.code,
                    "The store file was replaced, and the replaced file's write-ahead log (-wal) cannot be moved aside. Nothing was changed.",
                    backend: SQLiteProvider.backend, path: path, cause: failure)
            }
            if settled { return }
            try wait.pause(
                orBusy: "The store file was replaced while another connection had it open, and that connection still uses the "
                    + "replaced file's write-ahead log (-wal); it lets go once it notices. Nothing was changed.",
                backend: SQLiteProvider.backend, path: path)
        }
    }

    /// The longest suffix of a file this backend or SQLite writes beside the store: the name a
    /// replaced file's log is moved aside to (`-wal.replaced-<time>-<pid>`, each number up to 10
    /// digits), longer than `-journal`, `-counter` and `-reserve`.
    static let longestSuffix = "-wal.replaced-".utf8.count + 10 + 1 + 10

    /// Moves the replaced file's log aside (kept, in case it holds what someone wants back) and
    /// removes its index, which holds nothing of its own. Returns why the log could not be moved
    /// (or removed, when empty), if it could not.
    private static func moveAside(_ path: String) -> SystemCallError? {
        var info = stat()
        if lstat(path + "-wal", &info) == 0 {
            let aside = path + "-wal.replaced-\(Int(Date().timeIntervalSince1970))-\(getpid())"
            if info.st_size > 0 ? rename(path + "-wal", aside) != 0 : unlink(path + "-wal") != 0 && errno != ENOENT {
                return SystemCallError.last(info.st_size > 0 ? "rename" : "unlink", path: path + "-wal")
            }
        }
        _ = unlink(path + "-shm")
        return nil
    }
}
