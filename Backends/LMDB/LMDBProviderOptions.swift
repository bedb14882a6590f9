import AnyDefaultsCore
import CLMDB

extension LMDBProvider {
    /// How a store is opened.
    ///
    /// ```swift
    /// let options = LMDBProvider.Options(maximumMapSize: 64 << 20, durability: .noSync)
    /// let store = try LMDBProvider(path: path, options: options)
    /// ```
    public struct Options: Sendable, Hashable {
        /// How much a committed write survives.
        public enum Durability: Sendable, Hashable {
            /// Every commit is flushed to the disk before it returns: it survives a crash of the
            /// application and of the whole system (power loss).
            case synced
            /// Commits are not flushed (`MDB_NOSYNC`): much faster; a commit survives a crash of
            /// the application, but the last commits may be lost if the system crashes or loses
            /// power (the store then stays consistent on file systems that keep write order).
            case noSync
            /// Commits write the store's shared memory map in place and are not flushed
            /// (`MDB_WRITEMAP` with `MDB_NOSYNC`): no write or sync call per commit, the fastest
            /// writes (an `fstat` and the store's write lock, an `flock`, remain per commit);
            /// a commit survives a crash of the application (the map belongs to the operating
            /// system, which writes it out later), but a system crash or a power loss can lose
            /// the last commits *and leave the store damaged* (the pages may reach the disk in
            /// any order). The map's disk space is reserved as the map grows, so a full disk is
            /// an error (``DefaultsError/Code-swift.struct/storageFull``), never a crash.
            ///
            /// The map is opened so by the first provider of the store in the process; a provider
            /// that finds the store already open without it writes as ``noSync`` (the same
            /// guarantee, a system call per write). On platforms other than Linux, it is
            /// ``noSync``.
            case mapped
        }

        /// The size of the memory map when the store is opened, in bytes; the map grows from here
        /// as needed. The map reserves address space, not disk space. Default 4 MiB.
        public var initialMapSize: Int
        /// The largest the map may grow to, in bytes: the most data the store can hold. A write
        /// that needs more fails with ``DefaultsError/Code-swift.struct/storageFull``. The initial
        /// map is never larger (a smaller maximum caps it); a store file already larger than it
        /// keeps its data and can still be read and shrunk. Default 1 GiB.
        public var maximumMapSize: Int
        /// How much a committed write survives. Default ``Durability-swift.enum/synced``.
        public var durability: Durability
        /// How long a call waits for another process at most before it fails with
        /// ``DefaultsError/Code-swift.struct/busy``: for LMDB's write lock (held by a writer in
        /// another process), and, after the data file was replaced, for the processes still
        /// using the replaced one to let go of the lock file. Default 5 s. On Linux a holder that
        /// works is waited for past it (at most 30 s more): one killed while it held the lock,
        /// while its exit goes through (the kernel frees its lock only then, which under load
        /// takes seconds), and one that commits again and again. A stopped holder is not.
        public var lockTimeout: Duration

        /// Creates options; sizes are rounded up to whole memory pages.
        public init(
            initialMapSize: Int = 4 << 20, maximumMapSize: Int = 1 << 30, durability: Durability = .synced,
            lockTimeout: Duration = .seconds(5)
        ) {
            self.initialMapSize = initialMapSize
            self.maximumMapSize = maximumMapSize
            self.durability = durability
            // Bounded, so that no deadline computed from it can overflow.
            self.lockTimeout = min(max(lockTimeout, .zero), .seconds(365 * 86_400))
        }
    }
}
