#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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
/// The file holds one 64-bit number and is never written otherwise. It is created beside the
/// store with the store file's owner and mode, and never through a symbolic link. Where it cannot
/// be created or mapped (a read-only directory, a full disk), ``isCurrent`` is always false: every
/// cached read then catches up first, which is correct but costs a read of the store.
public final class SharedChangeCounter: Sendable {
    /// The mapped count, or `nil` when there is no file.
    @usableFromInline let shared: MappedCount?
    /// The shared count up to which every other process's commit has been reported to the caches
    /// (or was this process's own).
    @usableFromInline let accounted = Atomic<UInt64>(0)
    private let catchUp = Mutex<(@Sendable () -> Bool)?>(nil)
    /// One catch-up at a time: readers that find the count moved wait for the one under way.
    private let catchingUp = Mutex(())
    private let clients = Mutex<(next: Int, all: [Int: Client])>((0, [:]))

    private struct Client {
        var upstream: ObjectIdentifier?
        var invalidate: @Sendable ([String]) -> Void
        var invalidateAll: @Sendable () -> Void
    }

    /// Opens (or creates) the counter file at `file`, beside the store file `likeFile` whose owner
    /// and mode a new counter file takes.
    ///
    /// - Throws: ``DefaultsError`` with code `permissionDenied` if `file` is a symbolic link or
    ///   not a regular file owned by the store's owner: a file planted there must not be written.
    ///   A counter that cannot be created or mapped for other reasons is no error (see above).
    public init(file: String, backend: String, likeFile: String) throws(DefaultsError) {
        shared = try MappedCount(path: file, like: likeFile, backend: backend)
        if let shared { accounted.store(shared.load(), ordering: .releasing) }
    }

    deinit {
        shared?.unmap()
    }

    /// Sets the function that catches up with every commit made so far (see above); until it is
    /// set, a catch-up makes the caches forget everything.
    public func onCatchUp(_ body: @escaping @Sendable () -> Bool) {
        catchUp.withLock { $0 = body }
    }

    /// Whether no other process committed since this process last caught up: one atomic load of
    /// the shared count, compared with the count accounted for.
    @inlinable
    public var isCurrent: Bool {
        guard let shared else { return false }
        return shared.load() == accounted.load(ordering: .acquiring)
    }

    /// Catches up with every commit made so far by any process (see `catchUp`), unless another
    /// thread did meanwhile. If catching up fails, every registered cache forgets everything.
    public func synchronize() {
        catchingUp.withLock { _ in
            // Read first: every commit counted by now is visible to the catch-up below.
            let stamp = shared?.load() ?? 0
            if shared != nil, stamp == accounted.load(ordering: .acquiring) { return }
            if !(catchUp.withLock({ $0 })?() ?? false) { invalidateAll() }
            advance(to: stamp)
        }
    }

    /// Counts one commit of this process. Call it after the commit, before the write returns,
    /// under the lock that orders the provider's commits.
    public func committed() {
        guard let shared else { return }
        let now = shared.increment()
        // Nothing else counted since this process's last accounting: the commit is its own.
        _ = accounted.compareExchange(expected: now &- 1, desired: now, ordering: .acquiringAndReleasing)
    }

    /// Makes every registered cache forget `keys`, except the caches in front of `origin` (the
    /// provider instance whose own write changed them: its cache knows). Call it when the provider
    /// learns that keys changed, before it moves on; it returns once every cache forgot them.
    public func invalidate(_ keys: [String], exceptCachesOf origin: AnyObject? = nil) {
        guard !keys.isEmpty else { return }
        let skipped = origin.map(ObjectIdentifier.init)
        for client in clients.withLock({ Array($0.all.values) }) where skipped == nil || client.upstream != skipped {
            client.invalidate(keys)
        }
    }

    /// Makes every registered cache forget everything.
    public func invalidateAll() {
        for client in clients.withLock({ Array($0.all.values) }) { client.invalidateAll() }
    }

    /// Whether any cache is registered.
    public var hasCaches: Bool {
        clients.withLock { !$0.all.isEmpty }
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
            return clients.next
        }
        return DefaultsObservation { [weak self] in
            _ = self?.clients.withLock { $0.all.removeValue(forKey: id) }
        }
    }

    private func advance(to stamp: UInt64) {
        var current = accounted.load(ordering: .acquiring)
        // Counts only grow (wrapping after 2^64 commits, which no store reaches).
        while stamp &- current < UInt64.max / 2, stamp != current {
            let (exchanged, original) = accounted.compareExchange(expected: current, desired: stamp, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }
}

/// The 64-bit count in a counter file, mapped shared.
///
/// `@unchecked Sendable`: the mapped memory is only ever read and written through atomic
/// operations, and it stays mapped until this value's owner, the counter, is deinitialized.
@usableFromInline
struct MappedCount: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutablePointer<Atomic<UInt64>>
    let writable: Bool

    @inlinable
    func load() -> UInt64 { pointer.pointee.load(ordering: .acquiring) }

    func increment() -> UInt64 {
        pointer.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
    }

    /// Maps the counter file at `path`, creating it (8 zero bytes, the owner and mode of `like`)
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
        guard info.st_size >= 8 else { return nil }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let address = mmap(nil, 8, protection, MAP_SHARED, descriptor, 0), address != MAP_FAILED else { return nil }
        pointer = address.assumingMemoryBound(to: Atomic<UInt64>.self)
        self.writable = writable
    }

    /// Creates the file with its 8 bytes in place before it appears under its name (written to a
    /// temporary file, then linked), so that no process maps a file shorter than the count.
    private static func create(_ path: String, like: String) {
        var store = stat()
        let hasStore = stat(like, &store) == 0
        let mode = hasStore ? mode_t(store.st_mode & 0o666) : 0o600
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { return }
        defer { unlink(temporary) }
        var zero: UInt64 = 0
        let written = withUnsafeBytes(of: &zero) { write(descriptor, $0.baseAddress, 8) }
        // The mode asked for, whatever the umask; the store's owner when root creates it.
        _ = fchmod(descriptor, mode)
        if hasStore, geteuid() == 0 { _ = fchown(descriptor, store.st_uid, store.st_gid) }
        close(descriptor)
        guard written == 8 else { return }
        _ = link(temporary, path)
    }

    /// Unmaps the count.
    func unmap() {
        munmap(UnsafeMutableRawPointer(pointer), 8)
    }
}
