import AnyDefaultsCore

import AnyDefaultsPlatform

/// Room kept on the disk for a store that fills it: a file of 1 MiB beside the store
/// (`<store>-reserve`), given up when a removal cannot be written for lack of room.
///
/// On a full disk SQLite cannot write even a removal (it appends to the write-ahead log first),
/// so a store that filled the disk could not be shrunk through itself. With the reserve, a write
/// that only removes keys and fails with `storageFull` deletes the reserve, copies the log into the
/// store and truncates it (`wal_checkpoint(TRUNCATE)`), and runs again; the pages it frees are
/// reused by later writes. The reserve is made again once the disk has clearly room for it (four
/// times its size free) when a store opens or after such a recovery. A store without one (the
/// disk too full when it opened) works as before.
enum SQLiteReserve {
    static let size = 1 << 20

    /// `store` is an open store's path, its links already followed.
    static func path(forStore store: String) -> String { store + "-reserve" }

    /// Makes the reserve if it is missing and the disk has room for it. Never fails.
    static func ensure(forStore store: String) {
        let path = path(forStore: store)
        var info = stat()
        guard lstat(path, &info) != 0, errno == ENOENT else { return }
        var fileSystem = statvfs()
        guard statvfs(store, &fileSystem) == 0,
            UInt64(fileSystem.f_bavail) &* UInt64(fileSystem.f_frsize) > UInt64(4 * size)
        else { return }
        var storeInfo = stat()
        guard stat(store, &storeInfo) == 0 else { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, storeInfo.st_mode & 0o666)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // The store's owner and mode, also when root makes it in a user's directory.
        _ = fchmod(descriptor, storeInfo.st_mode & 0o666)
        if geteuid() == 0 { _ = fchown(descriptor, storeInfo.st_uid, storeInfo.st_gid) }
        guard allocate(descriptor) else {
            unlink(path)
            return
        }
    }

    /// Deletes the reserve, which frees its room; whether there was one.
    static func release(forStore store: String) -> Bool {
        unlink(path(forStore: store)) == 0
    }

    /// Allocates the file's blocks, durably.
    private static func allocate(_ descriptor: Int32) -> Bool {
        FileSpace.allocate(descriptor, bytes: size) == 0 && fsync(descriptor) == 0
    }
}
