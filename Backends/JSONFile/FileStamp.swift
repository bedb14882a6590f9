import AnyDefaultsPlatform

/// What identifies one version of a file without reading it: device, inode, size, modification
/// time, permissions and owner. A different stamp means the file was replaced or edited.
///
/// Equal stamps do not prove equal contents (a file system may reuse an inode, and mtime has a
/// coarse clock), which is why writers also count generations in the lock file (``LockFile``).
struct FileStamp: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64
    /// The permission bits (`0o600` for a file this backend created).
    var permissions: UInt16
    var owner: UInt32
    var group: UInt32

    init(_ info: stat) {
        (device, inode) = (info.fileID.device, info.fileID.inode)
        size = Int64(info.st_size)
        (modifiedSeconds, modifiedNanoseconds) = info.modificationTime
        permissions = UInt16(info.st_mode & 0o777)
        owner = UInt32(info.st_uid)
        group = UInt32(info.st_gid)
    }
}
