import AnyDefaultsPlatform
import Synchronization

/// The memory-mapped file of a ``JournaledProvider``: a header, then records appended one per
/// acknowledged write. The file is held with an exclusive `flock` for as long as it is open, so
/// one process at a time uses it.
///
/// Layout (little-endian): the header's first 8 bytes are the magic `ADJRNL`, 0, 1; a format
/// version (`UInt32`) at 8; the generation (`UInt64`) at 16; records from byte 64. A record is its
/// payload's length (`UInt32`), 4 bytes of zero, its generation (`UInt64`), a checksum (`UInt64`,
/// over the length, the generation and the payload), the payload
/// (``JournalRecord``), padded to 8 bytes.
///
/// Why it survives `kill -9`: an append is a copy into a shared map, which belongs to the kernel's
/// page cache the moment it is made, so a process killed after an append returned leaves it in
/// the file. A process killed during an append leaves a record whose checksum fails, and reading
/// stops there. Emptying the journal is one store: the header gets a new (random) generation, and
/// records of an older generation are not read.
package final class JournalFile {
    /// How long an open waits for another holder of the journal before it reports `busy`.
    static let lockWait = Duration.seconds(2)
    static let headerSize = 64
    static let recordHeaderSize = 24
    static let version: UInt32 = 1
    /// A journal larger than this is not one this library wrote.
    static let maximumSize = 1 << 30
    private static let magic: [UInt8] = Array("ADJRNL".utf8) + [0, 1]

    let path: String
    let capacity: Int
    private let descriptor: Int32
    private let base: UnsafeMutableRawPointer
    private(set) var generation: UInt64
    /// Where the next record goes.
    private(set) var end: Int

    /// Opens (or creates) the journal at `path` with room for `capacity` bytes, its blocks
    /// allocated so that a full disk is an error here and not a SIGBUS later; `like` is a file
    /// whose mode a new journal takes (the store's).
    package init(path: String, capacity: Int, like: String?, backend: String) throws(DefaultsError) {
        self.path = path
        var likeInfo = stat()
        let hasStore = like.map { stat($0, &likeInfo) == 0 } == true
        let mode = hasStore ? mode_t(likeInfo.st_mode & 0o666) : 0o600
        // The journal belongs to whoever owns the store (this user when there is none yet).
        let owner = hasStore ? likeInfo.st_uid : geteuid()
        // Created here (O_EXCL) or found: only a file this call created is given to the store's owner.
        var created = true
        var descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        if descriptor < 0, errno == EEXIST {
            created = false
            descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let failure = SystemCallError.last("open", path: path)
            let message = failure.number == ELOOP
                ? "A symbolic link is where the store's journal belongs; remove it." : "The store's journal could not be opened."
            throw DefaultsError(failure.number == ELOOP ? .permissionDenied : failure.code, message, backend: backend, path: path, cause: failure)
        }
        let size: Int
        let address: UnsafeMutableRawPointer
        do throws(DefaultsError) {
            size = try Self.prepare(
                descriptor, capacity: capacity, created: created, owner: owner, group: hasStore ? likeInfo.st_gid : getegid(), path: path,
                backend: backend)
            guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
                let failure = SystemCallError.last("mmap", path: path)
                throw DefaultsError(failure.code, "The store's journal could not be mapped.", backend: backend, path: path, cause: failure)
            }
            address = mapped
        } catch {
            close(descriptor)
            throw error
        }
        do throws(DefaultsError) {
            try Self.checkHeader(address, path: path, backend: backend)
        } catch {
            munmap(address, size)
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        self.capacity = size
        base = address
        _ = Self.held.withLock { $0.insert(path) }
        generation = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        end = Self.headerSize
    }

    deinit {
        munmap(base, capacity)
        // Closing the last descriptor gives up the lock.
        close(descriptor)
        _ = Self.held.withLock { $0.remove(path) }
    }

    /// The paths of the journals open in this process: one being closed (its last instance's
    /// final flush) is still held, and a new open waits for it instead of reporting `busy`.
    private static let held = Mutex<Set<String>>([])

    /// Waits until no journal of this process holds `path`, for at most `timeout`; whether none does.
    static func waitUntilReleased(_ path: String, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while held.withLock({ $0.contains(path) }) {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1_000)
        }
        return true
    }

    /// Locks the file, checks it is this user's regular file, and gives it `capacity` bytes
    /// (or keeps a larger size it has); the size to map.
    private static func prepare(
        _ descriptor: Int32, capacity: Int, created: Bool, owner: uid_t, group: gid_t, path: String, backend: String
    ) throws(DefaultsError) -> Int {
        // Another holder is waited for a moment: a process this one is starting holds a copy of
        // a journal just closed until it runs its program (fork, then exec), and a journal's
        // last instance in another process may be closing.
        var wait = FileLockWait(timeout: lockWait)
        while true {
            let taken: Bool
            do {
                taken = try FileLockWait.tryLock(descriptor, path: path)
            } catch {
                throw DefaultsError(error.code, "The store's journal could not be locked.", backend: backend, path: path, cause: error)
            }
            if taken { break }
            try wait.pause(
                orBusy: "Another process has the store open with its journal; a journaled store belongs to one process at a time.",
                backend: backend, path: path)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = SystemCallError.last("fstat", path: path)
            throw DefaultsError(failure.code, "The store's journal could not be inspected.", backend: backend, path: path, cause: failure)
        }
        // A hard link to another file (another user's, or the store's own) is not a journal.
        guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            throw DefaultsError(
                .permissionDenied, "The store's journal is not a regular file of its own (a link?); remove it.", backend: backend, path: path)
        }
        // Made just now by root for another user's store: theirs, so that their process opens it.
        if created, info.st_uid != owner, geteuid() == 0 {
            _ = fchown(descriptor, owner, group)
            info.st_uid = owner
        }
        // A journal is replayed into the store: one planted by another user (in a shared
        // directory) must not be, also when root opens the store.
        guard info.st_uid == owner || info.st_uid == geteuid() && geteuid() != 0 else {
            throw DefaultsError(
                .permissionDenied, "The store's journal belongs to another user than the store; remove it.", backend: backend, path: path)
        }
        guard info.st_size <= off_t(maximumSize) else {
            throw DefaultsError(
                .incompatibleFormat, "The file where the store's journal belongs is \(info.st_size) bytes, larger than a journal; move it aside.",
                backend: backend, path: path)
        }
        // Nothing is changed in a file that is not a journal (it is not extended either).
        var header = [UInt8](repeating: 0, count: headerSize)
        let read = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, headerSize, 0) }
        guard read >= 0 else {
            let failure = SystemCallError.last("pread", path: path)
            throw DefaultsError(failure.code, "The store's journal could not be read.", backend: backend, path: path, cause: failure)
        }
        guard header.allSatisfy({ $0 == 0 }) || header.starts(with: magic) else {
            throw DefaultsError(
                .incompatibleFormat, "The file where the store's journal belongs is not a journal; move it aside.", backend: backend, path: path)
        }
        let found = UInt32(header[8]) | UInt32(header[9]) << 8 | UInt32(header[10]) << 16 | UInt32(header[11]) << 24
        guard !header.starts(with: magic) || found == version else {
            throw DefaultsError(
                .incompatibleFormat, "The store's journal has format version \(found); this library reads version \(version).",
                backend: backend, path: path)
        }
        let size = max(Int(info.st_size), capacity + (8 - capacity % 8) % 8, headerSize + recordHeaderSize)
        let code = FileSpace.allocate(descriptor, bytes: size)
        guard code == 0 else {
            let failure = SystemCallError(call: "allocate", path: path, number: code)
            throw DefaultsError(
                code == ENOSPC || code == EDQUOT ? .storageFull : failure.code,
                "Disk space for the store's journal (\(size) bytes) could not be reserved.", backend: backend, path: path, cause: failure)
        }
        return size
    }

    /// A header of zeros (a new file, or one whose creation was cut short) is written; any other
    /// must be this format's.
    private static func checkHeader(_ base: UnsafeMutableRawPointer, path: String, backend: String) throws(DefaultsError) {
        let header = UnsafeRawBufferPointer(start: base, count: headerSize)
        if header.allSatisfy({ $0 == 0 }) {
            for (offset, byte) in magic.enumerated() { base.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self) }
            base.storeBytes(of: version.littleEndian, toByteOffset: 8, as: UInt32.self)
            base.storeBytes(of: UInt64.random(in: 1...UInt64.max).littleEndian, toByteOffset: 16, as: UInt64.self)
            return
        }
        guard header.prefix(magic.count).elementsEqual(magic) else {
            throw DefaultsError(
                .incompatibleFormat, "The file where the store's journal belongs is not a journal; move it aside.", backend: backend, path: path)
        }
        let found = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard found == version else {
            throw DefaultsError(
                .incompatibleFormat, "The store's journal has format version \(found); this library reads version \(version).",
                backend: backend, path: path)
        }
    }

    /// Whether no record of the current generation has been appended or read.
    var isEmpty: Bool { end == Self.headerSize }

    /// The bytes a record of `payloadCount` bytes takes.
    static func recordSize(payloadCount: Int) -> Int {
        let size = recordHeaderSize + payloadCount
        return size + (8 - size % 8) % 8
    }

    /// Whether a record of `payloadCount` bytes fits in an empty journal.
    func canEverHold(payloadCount: Int) -> Bool {
        payloadCount <= Int(UInt32.max) && Self.recordSize(payloadCount: payloadCount) <= capacity - Self.headerSize
    }

    /// Appends a record holding `payload`; false, with nothing written, when it does not fit.
    func append(_ payload: UnsafeRawBufferPointer) -> Bool {
        let size = Self.recordSize(payloadCount: payload.count)
        guard payload.count <= Int(UInt32.max), size <= capacity - end else { return false }
        let record = base + end
        if let source = payload.baseAddress { (record + Self.recordHeaderSize).copyMemory(from: source, byteCount: payload.count) }
        record.storeBytes(of: UInt32(payload.count).littleEndian, as: UInt32.self)
        record.storeBytes(of: UInt32(0), toByteOffset: 4, as: UInt32.self)
        record.storeBytes(of: generation.littleEndian, toByteOffset: 8, as: UInt64.self)
        let checksum = Self.checksum(length: UInt32(payload.count), generation: generation, payload)
        record.storeBytes(of: checksum.littleEndian, toByteOffset: 16, as: UInt64.self)
        end += size
        return true
    }

    /// The payloads of the current generation's records, in order, up to the first record that
    /// is not whole (cut short by a crash); the next append goes after the last whole one.
    func records() -> [UnsafeRawBufferPointer] {
        var payloads: [UnsafeRawBufferPointer] = []
        var offset = Self.headerSize
        while capacity - offset >= Self.recordHeaderSize {
            let record = base + offset
            let length = UInt32(littleEndian: record.loadUnaligned(as: UInt32.self))
            guard length > 0, Int(length) <= capacity - offset - Self.recordHeaderSize,
                UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) == generation
            else { break }
            let payload = UnsafeRawBufferPointer(start: record + Self.recordHeaderSize, count: Int(length))
            guard UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
                == Self.checksum(length: length, generation: generation, payload)
            else { break }
            payloads.append(payload)
            offset += Self.recordSize(payloadCount: Int(length))
        }
        end = offset
        return payloads
    }

    /// Empties the journal: one store of a new generation into the header, written to the disk
    /// at once (else, after a power loss, the old generation's records, already applied, could be
    /// read again over newer writes).
    ///
    /// The generation is random, not the next number: bytes left in the file by older records
    /// (values an application stored, which an attacker may choose) cannot be laid out as a
    /// record of the current generation without knowing it.
    func reset() {
        var next = UInt64.random(in: 1...UInt64.max)
        while next == generation { next = UInt64.random(in: 1...UInt64.max) }
        generation = next
        base.storeBytes(of: generation.littleEndian, toByteOffset: 16, as: UInt64.self)
        _ = msync(base, Self.headerSize, MS_SYNC)
        end = Self.headerSize
    }

    /// A 64-bit checksum of the length, the generation and the payload, eight bytes at a time:
    /// each word is mixed in by a bijection of the state, so a record that differs in any one
    /// word from what was written always fails it.
    static func checksum(length: UInt32, generation: UInt64, _ payload: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        @inline(__always) func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0x0000_0100_0000_01b3
            hash ^= hash >> 29
        }
        mix(UInt64(length))
        mix(generation)
        var offset = 0
        while payload.count - offset >= 8 {
            mix(UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
        }
        var tail = UInt64(payload.count - offset) << 56
        for index in offset..<payload.count { tail |= UInt64(payload[index]) << (8 * UInt64(index - offset)) }
        mix(tail)
        return hash
    }
}
