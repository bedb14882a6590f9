import AnyDefaultsPlatform
import Synchronization

/// A count of the commits made to one store by every process that uses it, kept in a small
/// memory-mapped file beside the store, so that a cache in front of the store's provider can tell
/// with one atomic load whether another process committed since it last looked.
///
/// ``CachingProvider`` uses it when its upstream offers one (``DefaultsProvider/sharedChangeCounter``):
/// before answering a read from memory it compares the shared count with the count this process
/// has accounted for; when they differ, it first has the provider catch up with the other
/// processes' commits (``synchronize()``), which forgets exactly the keys they changed. So a read
/// that starts after another process's write returned never returns the value that write replaced.
///
/// A provider that offers it (the SQLite and LMDB backends do):
/// - opens one per store and process, and gives it (``onCatchUp(_:)``) a function that learns of
///   every commit made to the store so far (reading the store's change log) and reports the keys
///   that other processes changed through ``invalidate(_:exceptCachesOf:)`` (or
///   ``invalidateAll()`` when it cannot tell which), returning whether it could;
/// - calls ``committed()`` after each of its own commits, before the write returns, under the
///   lock that orders its commits;
/// - calls ``invalidate(_:exceptCachesOf:)`` whenever it learns that keys changed by other means
///   too (its change-log watcher, another instance in this process), before it moves on.
///
/// ```swift
/// let counter = try SharedChangeCounter(file: path + "-counter", backend: "MyStore", likeFile: path)
/// counter.onCatchUp { [weak self] in self?.readChangeLog() ?? false }
/// // after each commit, under the commit lock:
/// counter.committed()
/// ```
///
/// The file holds two 64-bit numbers: the count, and the identity of the store file the files
/// beside the store belong to (``storeIdentity``). It is created beside the
/// store with the store file's owner and mode, and never through a symbolic link. Where it cannot
/// be created or mapped (a read-only directory, a full disk), ``isCurrent`` is always false: every
/// cached read then catches up first, which is correct but costs a read of the store.
public final class SharedChangeCounter: Sendable {
    /// What a read checks: the mapped count and the count accounted for.
    public let probe: Probe
    /// The mapped file, or `nil` when there is none.
    private let mapping: MappedWords?
    private let catchUp = Mutex<(@Sendable () -> Bool)?>(nil)
    /// One catch-up at a time: readers that find the count moved wait for the one under way.
    private let catchingUp = Mutex(())
    private let clients = Mutex<(next: Int, all: [Int: Client])>((0, [:]))
    /// How many caches are registered: read without the lock, so that a write with no cache to
    /// tell costs one load.
    private let clientCount = Atomic<Int>(0)

    private struct Client {
        var upstream: ObjectIdentifier?
        var invalidate: @Sendable ([String]) -> Void
        var invalidateAll: @Sendable () -> Void
    }

    /// The two words a cached read compares, held by the cache so that the comparison costs two
    /// loads and nothing else (no reference counting, no call).
    ///
    /// `@unchecked Sendable`: the memory is only ever read and written through atomic operations,
    /// and stays valid while the counter lives (a cache keeps the counter with its probe).
    public struct Probe: @unchecked Sendable {
        /// The shared count, in the mapped file; `nil` when there is no file.
        @usableFromInline let shared: UnsafeMutablePointer<Atomic<UInt64>>?
        /// The shared count up to which every other process's commit has been reported to the
        /// caches (or was this process's own).
        @usableFromInline let accounted: UnsafeMutablePointer<Atomic<UInt64>>

        /// Whether no other process committed since this process last caught up: one atomic
        /// load of the shared count, compared with the count accounted for.
        @inlinable
        public var isCurrent: Bool {
            guard let shared else { return false }
            return shared.pointee.load(ordering: .acquiring) == accounted.pointee.load(ordering: .acquiring)
        }
    }

    /// Opens (or creates) the counter file at `file`, beside the store file `likeFile` whose owner
    /// and mode a new counter file takes.
    ///
    /// - Throws: ``DefaultsError`` with code `permissionDenied` if `file` is a symbolic link or
    ///   not a regular file owned by the store's owner: a file planted there must not be written.
    ///   A counter that cannot be created or mapped for other reasons is no error (see above).
    public init(file: String, backend: String, likeFile: String) throws(DefaultsError) {
        mapping = try MappedWords(path: file, like: likeFile, backend: backend)
        let accounted = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        accounted.initialize(to: Atomic(mapping?.count.pointee.load(ordering: .acquiring) ?? 0))
        probe = Probe(shared: mapping?.count, accounted: accounted)
    }

    deinit {
        mapping?.unmap()
        probe.accounted.deinitialize(count: 1)
        probe.accounted.deallocate()
    }

    /// Sets the function that catches up with every commit made so far (see above); until it is
    /// set, a catch-up makes the caches forget everything.
    public func onCatchUp(_ body: @escaping @Sendable () -> Bool) {
        catchUp.withLock { $0 = body }
    }

    /// Whether no other process committed since this process last caught up (``Probe/isCurrent``).
    public var isCurrent: Bool { probe.isCurrent }

    /// Catches up with every commit made so far by any process (see `catchUp`), unless another
    /// thread did meanwhile. If catching up fails, every registered cache forgets everything.
    public func synchronize() {
        catchingUp.withLock { _ in
            // Read first: every commit counted by now is visible to the catch-up below.
            let stamp = mapping?.count.pointee.load(ordering: .acquiring) ?? 0
            if mapping != nil, stamp == accounted.pointee.load(ordering: .acquiring) { return }
            if !(catchUp.withLock({ $0 })?() ?? false) { invalidateAll() }
            advance(to: stamp)
        }
    }

    /// Counts one commit of this process. Call it after the commit, before the write returns,
    /// under the lock that orders the provider's commits.
    public func committed() {
        guard let mapping, mapping.writable else { return }
        let now = mapping.count.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        // Nothing else counted since this process's last accounting: the commit is its own.
        _ = accounted.pointee.compareExchange(expected: now &- 1, desired: now, ordering: .acquiringAndReleasing)
    }

    /// Makes every registered cache forget `keys`, except the caches in front of `origin` (the
    /// provider instance whose own write changed them: its cache knows). Call it when the provider
    /// learns that keys changed, before it moves on; it returns once every cache forgot them.
    public func invalidate(_ keys: [String], exceptCachesOf origin: AnyObject? = nil) {
        guard !keys.isEmpty else { return }
        invalidate(keys: { keys }, exceptCachesOf: origin)
    }

    /// ``invalidate(_:exceptCachesOf:)`` for the keys of `events`, which are gathered only if a
    /// cache is registered.
    public func invalidate(keysOf events: [DefaultsChangeEvent], exceptCachesOf origin: AnyObject? = nil) {
        guard !events.isEmpty else { return }
        invalidate(keys: { events.map(\.key) }, exceptCachesOf: origin)
    }

    private func invalidate(keys: () -> [String], exceptCachesOf origin: AnyObject?) {
        guard clientCount.load(ordering: .acquiring) > 0 else { return }
        let skipped = origin.map(ObjectIdentifier.init)
        let targets = clients.withLock { Array($0.all.values) }.filter { skipped == nil || $0.upstream != skipped }
        guard !targets.isEmpty else { return }
        let keys = keys()
        for client in targets { client.invalidate(keys) }
    }

    /// Makes every registered cache forget everything.
    public func invalidateAll() {
        for client in clients.withLock({ Array($0.all.values) }) { client.invalidateAll() }
    }

    /// Whether any cache is registered.
    public var hasCaches: Bool {
        clientCount.load(ordering: .acquiring) > 0
    }

    /// Registers a cache in front of `upstream`, told synchronously of every change the provider
    /// learns of, until the returned observation is cancelled or released.
    public func register(
        upstream: AnyObject?, invalidate: @escaping @Sendable ([String]) -> Void,
        invalidateAll: @escaping @Sendable () -> Void
    ) -> DefaultsObservation {
        let client = Client(upstream: upstream.map(ObjectIdentifier.init), invalidate: invalidate, invalidateAll: invalidateAll)
        let id = clients.withLock { clients in
            defer { clients.next += 1 }
            clients.all[clients.next] = client
            clientCount.add(1, ordering: .releasing)
            return clients.next
        }
        return DefaultsObservation { [weak self] in
            self?.clients.withLock { clients in
                if clients.all.removeValue(forKey: id) != nil { self?.clientCount.subtract(1, ordering: .releasing) }
            }
        }
    }

    private var accounted: UnsafeMutablePointer<Atomic<UInt64>> { probe.accounted }

    /// The identity of the store file that the store's files beside it (a write-ahead log, a lock
    /// file) were last used with, as a backend recorded it with ``recordStoreIdentity(_:replacing:)``;
    /// 0 if none was recorded, `nil` where there is no counter file. A backend compares it with the
    /// store file it opens: when they differ, the store file was replaced (a backup renamed over
    /// it), and what is beside it belongs to the file that was there before.
    public var storeIdentity: UInt64? {
        guard let mapping else { return nil }
        guard mapping.recordedBy.pointee.load(ordering: .acquiring) == mapping.ownIdentity else { return 0 }
        return mapping.identity.pointee.load(ordering: .acquiring)
    }

    /// Records `identity` as the store file's, if the recorded one is still `expected`; returns
    /// whether it did (or there is no counter file to record it in).
    @discardableResult
    public func recordStoreIdentity(_ identity: UInt64, replacing expected: UInt64) -> Bool {
        guard let mapping, mapping.writable else { return true }
        if mapping.recordedBy.pointee.load(ordering: .acquiring) != mapping.ownIdentity {
            // Copied or moved with the store: what it recorded was another file's. Every process
            // writes the same two values here, so plain stores do.
            guard expected == 0 else { return false }
            mapping.identity.pointee.store(identity, ordering: .releasing)
            mapping.recordedBy.pointee.store(mapping.ownIdentity, ordering: .releasing)
            return true
        }
        return mapping.identity.pointee.compareExchange(expected: expected, desired: identity, ordering: .acquiringAndReleasing).exchanged
    }

    /// A store file's identity as ``storeIdentity`` records it: its device and inode, mixed into
    /// one number that is never 0.
    ///
    /// Not its creation time, although a new file that took a deleted one's inode number passes
    /// for it without: a file's creation time can change while it stays the same file (overlayfs
    /// gives a file a new one when it is first opened for writing, copying it up from an image's
    /// layer; Apple's file systems move it back when `utimes` sets an earlier modification time),
    /// and then the store file would pass for a replaced one, and the log beside it would be set
    /// aside. The counter file's own identity includes it (``identity(_:born:)``): a restored
    /// counter file that took the old one's inode number then records nothing, which can only
    /// make the check accept the files beside the store.
    package static func identity(_ file: FileID) -> UInt64 {
        identity(file, born: 0)
    }

    /// A file's device, inode and creation time (``FileBirth``, 0 where unknown), mixed into one
    /// number that is never 0.
    package static func identity(_ file: FileID, born: UInt64) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for word in [file.device, file.inode, born] {
            for shift in stride(from: 0, to: 64, by: 8) {
                hash = (hash ^ (word >> UInt64(shift) & 0xFF)) &* 0x0000_0100_0000_01B3
            }
        }
        return hash == 0 ? 1 : hash
    }

    private func advance(to stamp: UInt64) {
        var current = accounted.pointee.load(ordering: .acquiring)
        // Counts only grow (wrapping after 2^64 commits, which no store reaches).
        while stamp &- current < UInt64.max / 2, stamp != current {
            let (exchanged, original) = accounted.pointee.compareExchange(expected: current, desired: stamp, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }
}

/// The counter file's 64-bit words, mapped shared: the count; the identity of the store file the
/// files beside the store belong to; and the identity of the counter file that recorded it (a
/// counter file copied or moved with the store is a new file, whose record says nothing).
///
/// `@unchecked Sendable`: the mapped memory is only ever read and written through atomic
/// operations, and it stays mapped until its owner, the counter, is deinitialized.
struct MappedWords: @unchecked Sendable {
    static let size = 24
    let count: UnsafeMutablePointer<Atomic<UInt64>>
    let identity: UnsafeMutablePointer<Atomic<UInt64>>
    let recordedBy: UnsafeMutablePointer<Atomic<UInt64>>
    /// This counter file's own identity.
    let ownIdentity: UInt64
    let writable: Bool

    /// Maps the counter file at `path`, creating it (zero words, the owner and mode of `like`)
    /// if it is missing; `nil` where it can be neither created nor opened.
    init?(path: String, like: String, backend: String) throws(DefaultsError) {
        var descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        var writable = true
        if descriptor < 0, errno == ENOENT {
            Self.create(path, like: like)
            descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        }
        if descriptor < 0, errno == EACCES || errno == EROFS || errno == EPERM {
            descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            writable = false
        }
        if descriptor < 0 {
            guard errno == ELOOP else { return nil }
            throw DefaultsError(
                .permissionDenied, "A symbolic link is where the store's counter file belongs; remove it.",
                backend: backend, path: path, cause: SystemCallError.last("open", path: path))
        }
        defer { close(descriptor) }
        var info = stat()
        var store = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT == S_IFREG, stat(like, &store) != 0 || info.st_uid == store.st_uid else {
            throw DefaultsError(
                .permissionDenied, "The store's counter file is not a regular file of the store's owner; remove it.",
                backend: backend, path: path)
        }
        guard info.st_size >= Self.size else { return nil }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let address = mmap(nil, Self.size, protection, MAP_SHARED, descriptor, 0), address != MAP_FAILED else { return nil }
        count = address.assumingMemoryBound(to: Atomic<UInt64>.self)
        identity = count + 1
        recordedBy = count + 2
        ownIdentity = SharedChangeCounter.identity(info.fileID, born: FileBirth.of(descriptor: descriptor))
        self.writable = writable
    }

    /// Creates the file with its bytes in place before it appears under its name (written to a
    /// temporary file, then linked), so that no process maps a file shorter than its words.
    private static func create(_ path: String, like: String) {
        var store = stat()
        let hasStore = stat(like, &store) == 0
        let mode = hasStore ? mode_t(store.st_mode & 0o666) : 0o600
        // Without a store file yet, the owner of the directory the counter goes into.
        var owner = store
        if !hasStore {
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            guard stat(directory.isEmpty ? "/" : directory, &owner) == 0 else { return }
        }
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { return }
        defer { unlink(temporary) }
        let zeros = [UInt8](repeating: 0, count: size)
        let written = zeros.withUnsafeBytes { write(descriptor, $0.baseAddress, size) }
        // The mode asked for, whatever the umask; the store's owner when root creates it.
        _ = fchmod(descriptor, mode)
        if geteuid() == 0 { _ = fchown(descriptor, owner.st_uid, owner.st_gid) }
        close(descriptor)
        guard written == size else { return }
        _ = link(temporary, path)
    }

    /// Unmaps the words.
    func unmap() {
        munmap(UnsafeMutableRawPointer(count), Self.size)
    }
}
