import AnyDefaultsPlatform

/// When a file was created, where the file system records it (ext4, XFS, Btrfs and tmpfs on
/// Linux, APFS and HFS+ on Apple platforms).
///
/// A device and inode name a file only while it exists: a file created after another was deleted
/// often gets its inode number (ext4 hands out the lowest free one). A directory restored from a
/// copy then holds files whose inode numbers are those of the files it replaced, in another
/// order. The creation time tells them apart: a copy, or any new file, has its own. It is not a
/// name for a file, though: overlayfs changes it when it copies a file up, and `utimes` can move
/// it back on Apple's file systems (see ``SharedChangeCounter/identity(_:)``).
package enum FileBirth {
    /// The creation time of the file open as `descriptor`, in nanoseconds since 1970, or 0 where
    /// the file system does not record it.
    package static func of(descriptor: Int32) -> UInt64 {
        #if canImport(Darwin)
        var info = stat()
        return fstat(descriptor, &info) == 0 ? nanoseconds(info.st_birthtimespec) : 0
        #elseif os(Linux)
        statxBirth(descriptor)
        #else
        0
        #endif
    }

    #if canImport(Darwin)
    private static func nanoseconds(_ time: timespec) -> UInt64 {
        UInt64(bitPattern: Int64(time.tv_sec)) &* 1_000_000_000 &+ UInt64(truncatingIfNeeded: time.tv_nsec)
    }
    #elseif os(Linux)
    /// `statx(2)`, looked up at run time (in a fully static binary there is nothing to look up,
    /// and the creation time is 0): the C library declares it only for `_GNU_SOURCE`, which
    /// Swift's Glibc module does not define (glibc 2.28 and musl 1.2.5 export it).
    private typealias Statx = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer) -> Int32

    private static let statx: Statx? = dlsym(nil, "statx").map { unsafeBitCast($0, to: Statx.self) }

    /// `STATX_BTIME` and `AT_EMPTY_PATH` (linux/stat.h, fcntl.h), which Swift does not import.
    private static let birthTimeMask: UInt32 = 0x800
    private static let atEmptyPath: Int32 = 0x1000

    private static func statxBirth(_ descriptor: Int32) -> UInt64 {
        guard let statx else { return 0 }
        // `struct statx` is 256 bytes: `stx_mask` (UInt32) at 0, `stx_btime` at 80 (seconds as
        // Int64, then nanoseconds as UInt32). The layout is the kernel's ABI.
        return withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { buffer -> UInt64 in
            guard let base = buffer.baseAddress else { return 0 }
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            guard statx(descriptor, "", atEmptyPath, birthTimeMask, base) == 0,
                base.load(as: UInt32.self) & birthTimeMask != 0
            else { return 0 }
            let seconds = base.load(fromByteOffset: 80, as: Int64.self)
            let nanoseconds = base.load(fromByteOffset: 88, as: UInt32.self)
            return UInt64(bitPattern: seconds) &* 1_000_000_000 &+ UInt64(nanoseconds)
        }
    }
    #endif
}
