import AnyDefaultsPlatform

/// What identifies one version of a file without reading it: device, inode, size, modification
/// and status-change times, permissions and owner. A different stamp means the file was replaced,
/// edited or had its permissions changed.
///
/// Equal stamps do not prove equal contents (a file system may reuse an inode, and mtime has a
/// coarse clock): a writer that relies on stamps also counts generations (the JSON file's lock
/// file) or treats a recent stamp as unsure (``isRecent``).
package struct FileStamp: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    package var modifiedSeconds: Int64
    package var modifiedNanoseconds: Int64
    package var changedSeconds: Int64
    package var changedNanoseconds: Int64
    /// The permission bits (`0o600` for a file AnyDefaults created).
    package var permissions: UInt16
    package var owner: UInt32
    package var group: UInt32

    package init(_ info: stat) {
        (device, inode) = (info.fileID.device, info.fileID.inode)
        size = Int64(info.st_size)
        (modifiedSeconds, modifiedNanoseconds) = info.modificationTime
        (changedSeconds, changedNanoseconds) = info.changeTime
        permissions = UInt16(info.st_mode & 0o777)
        (owner, group) = (UInt32(info.st_uid), UInt32(info.st_gid))
    }

    /// Whether the file was modified less than 100 ms ago: too recently for its stamp to tell a
    /// later in-place rewrite of the same size apart.
    package var isRecent: Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        // A file's time can be anything (`touch -d 2400-01-01`, a restored archive): whole seconds
        // are compared first, so no arithmetic on them can overflow. A time in the future counts
        // as recent.
        let (seconds, overflow) = Int64(now.tv_sec).subtractingReportingOverflow(modifiedSeconds)
        if overflow { return modifiedSeconds > 0 }
        guard seconds <= 1 else { return false }
        guard seconds >= -1 else { return true }
        return seconds * 1_000_000_000 + (Int64(now.tv_nsec) - modifiedNanoseconds) < 100_000_000
    }
}
