import AnyDefaultsCore
import CLMDB

import AnyDefaultsPlatform

/// Checks, when a store is opened, that its data file holds every page the store refers to, and
/// that those pages are structurally sound.
///
/// LMDB reads pages through a memory map and trusts them: a page beyond the end of a truncated
/// file stops the process with `SIGBUS` on first access, and a damaged page (a leaf where a branch
/// belongs, a node outside its page) makes liblmdb fail an assertion and abort. So the check reads
/// the B-trees with `pread` first and rejects such files as `corrupted`: every page the store can
/// reach must lie inside the file, sit at the depth its tree records (branches above, leaves at
/// the bottom) and keep its nodes inside the page. Files up to ``fullCheckLimit`` are walked on
/// every open (a settings store is small; the walk reads each page in use once); larger ones only
/// when they end before the last page in use. A file that ends early can still be whole (pages
/// freed in the transaction that allocated them are never written), so the walk fails only if a
/// page the store can reach lies beyond the end. It reads LMDB's on-disk format (data version 1,
/// unchanged across the 0.9 series), documented in `mdb.c`. Damage made while a store is open is
/// not detected.
enum LMDBFileCheck {
    /// The largest data file walked on every open.
    static let fullCheckLimit = 64 << 20

    /// Checks the data file of `environment` as of the read transaction `snapshot`, which pins the
    /// pages the walk follows: other processes may be committing meanwhile, and without it a page
    /// of the walked tree could be reused under the walk. Returns `false`, without checking, if
    /// the snapshot's meta page was overwritten before it was read (two commits came in
    /// between): the caller tries again in a new snapshot.
    static func verify(environment: OpaquePointer, snapshot: OpaquePointer, path: String) throws(DefaultsError) -> Bool {
        var fd: mdb_filehandle_t = -1
        var rc = mdb_env_get_fd(environment, &fd)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "inspect the data file", path: path) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw DefaultsError.lmdb(errno, "inspect the data file", path: path) }
        var statistics = MDB_stat()
        rc = mdb_env_stat(environment, &statistics)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "inspect the data file", path: path) }

        let pageSize = Int(statistics.ms_psize)
        let filePages = Int(status.st_size) / max(pageSize, 1)
        var walk = LMDBPageWalk(fd: fd, pageSize: pageSize, filePages: filePages, path: path)
        return try walk.run(transaction: UInt64(mdb_txn_id(snapshot)), skippingWalkBeyond: fullCheckLimit)
    }
}

/// Walks the free-page and main B-trees of a data file with `pread`, checking that every page they
/// reach (branch, leaf and overflow pages, and the trees of named databases) lies inside the file.
struct LMDBPageWalk {
    let fd: Int32
    let pageSize: Int
    let filePages: Int
    let path: String

    /// Page numbers, sizes and counters are machine words in LMDB's format.
    private let word = MemoryLayout<Int>.size
    private var headerSize: Int { word + 8 }
    private var invalidPage: UInt64 { word == 8 ? .max : UInt64(UInt32.max) }
    private var page: [UInt8] = []

    private static let branchFlag: UInt16 = 0x01
    private static let leafFlag: UInt16 = 0x02
    private static let overflowFlag: UInt16 = 0x04
    private static let metaFlag: UInt16 = 0x08
    private static let leaf2Flag: UInt16 = 0x20
    private static let bigDataNode: UInt16 = 0x01
    private static let subDatabaseNode: UInt16 = 0x02
    private static let magic: UInt32 = 0xBEEF_C0DE

    /// The last page in use, from the current meta page.
    private var lastPage: UInt64 = 1

    init(fd: Int32, pageSize: Int, filePages: Int, path: String) {
        self.fd = fd
        self.pageSize = pageSize
        self.filePages = filePages
        self.path = path
    }

    /// Walks the trees of the meta page of `transaction`; returns `false` if neither meta page
    /// belongs to it any more. A file larger than `limit` that holds every page in use is not
    /// walked.
    mutating func run(transaction: UInt64, skippingWalkBeyond limit: Int) throws(DefaultsError) -> Bool {
        guard pageSize >= 256, filePages >= 2 else { throw damaged("The data file is too short to be an LMDB store.") }
        let first = try readMeta(0)
        let second = try readMeta(1)
        guard let meta = [first, second].first(where: { $0.transaction == transaction }) else { return false }
        if UInt64(filePages) > meta.lastPage, filePages * pageSize > limit { return true }
        _ = try run(meta)
        return true
    }

    /// Walks the trees of the newer meta page; returns the highest page number they reach.
    mutating func run() throws(DefaultsError) -> UInt64 {
        guard pageSize >= 256, filePages >= 2 else { throw damaged("The data file is too short to be an LMDB store.") }
        // LMDB uses the meta page with the higher transaction ID.
        let first = try readMeta(0)
        let second = try readMeta(1)
        return try run(first.transaction < second.transaction ? second : first)
    }

    /// Walks the trees of `meta`; returns the highest page number they reach.
    private mutating func run(_ meta: Meta) throws(DefaultsError) -> UInt64 {
        // LMDB never allocates a page beyond the map its meta page records; a meta page that says
        // otherwise is damaged (LMDB would refuse every transaction with MDB_MAP_RESIZED).
        guard meta.lastPage < meta.mapSize / UInt64(pageSize) else {
            throw damaged("The data file's meta page records more pages than its map holds.")
        }
        lastPage = meta.lastPage
        // Each page with its level in its tree (1 for the root) and the tree's depth.
        var pending = meta.roots.filter { $0.root != invalidPage }.map { (page: $0.root, level: 1, depth: $0.depth) }
        var visited = 0
        var highest: UInt64 = 1
        while let (pageNumber, level, depth) = pending.popLast() {
            visited += 1
            guard visited <= filePages else { throw damaged("The data file's page tree has a cycle.") }
            try readPage(pageNumber)
            highest = max(highest, pageNumber)
            let flags = try uint16(at: word + 2)
            // Branches above, leaves at the bottom: liblmdb asserts this rather than checking it.
            let isLeaf = flags & Self.leafFlag != 0
            guard isLeaf != (flags & Self.branchFlag != 0), isLeaf == (level == depth), level <= depth else {
                throw damaged("Page \(pageNumber) of the data file is not the kind of page its tree needs there.")
            }
            if !isLeaf {
                try forEachNode(leaf: false) { (offset: Int, nodeFlags: UInt16, _: Int) throws(DefaultsError) in
                    let low = try uint16(at: offset), high = try uint16(at: offset + 2)
                    var child = UInt64(low) | UInt64(high) << 16
                    if word == 8 { child |= UInt64(nodeFlags) << 32 }
                    pending.append((child, level + 1, depth))
                }
            } else {
                guard flags & Self.leaf2Flag == 0 else { continue }
                var overflows: [UInt64] = []
                try forEachNode(leaf: true) { (offset: Int, nodeFlags: UInt16, keySize: Int) throws(DefaultsError) in
                    let dataOffset = offset + 8 + keySize
                    if nodeFlags & Self.bigDataNode != 0 {
                        overflows.append(try machineWord(at: dataOffset))
                    } else if nodeFlags & Self.subDatabaseNode != 0 {
                        let database = try self.database(at: dataOffset)
                        if database.root != invalidPage { pending.append((database.root, 1, database.depth)) }
                    }
                }
                for overflow in overflows { highest = max(highest, try checkOverflow(overflow)) }
            }
        }
        return highest
    }

    /// The root page and depth of the database record (`MDB_db`) at `offset` of the current page.
    private func database(at offset: Int) throws(DefaultsError) -> (root: UInt64, depth: Int) {
        (try machineWord(at: offset + 8 + 4 * word), Int(try uint16(at: offset + 6)))
    }

    private struct Meta {
        var roots: [(root: UInt64, depth: Int)]
        var mapSize: UInt64
        var lastPage: UInt64
        var transaction: UInt64
    }

    private mutating func readMeta(_ number: UInt64) throws(DefaultsError) -> Meta {
        try readPage(number)
        guard try uint16(at: word + 2) & Self.metaFlag != 0, try uint32(at: headerSize) == Self.magic else {
            throw damaged("The data file's meta page \(number) is damaged.")
        }
        let databases = headerSize + 8 + 2 * word
        let databaseSize = 8 + 5 * word
        return Meta(
            roots: [try database(at: databases), try database(at: databases + databaseSize)],
            mapSize: try machineWord(at: headerSize + 8 + word),
            lastPage: try machineWord(at: databases + 2 * databaseSize),
            transaction: try machineWord(at: databases + 2 * databaseSize + word))
    }

    /// Checks the first page of an overflow run and that the whole run lies in the file; returns
    /// its last page.
    private mutating func checkOverflow(_ number: UInt64) throws(DefaultsError) -> UInt64 {
        try readPage(number)
        guard try uint16(at: word + 2) & Self.overflowFlag != 0 else {
            throw damaged("Page \(number) of the data file should hold a large value but does not.")
        }
        let count = UInt64(try uint32(at: word + 4))
        // Numbers from the file: no arithmetic on them may wrap (a run of 0 pages, a page number
        // near the top of the range).
        let (end, overflow) = number.addingReportingOverflow(count)
        guard count >= 1, !overflow, end <= UInt64(filePages), end - 1 <= lastPage else {
            throw truncated(overflow ? .max : max(end, 1) - 1)
        }
        return end - 1
    }

    /// Calls `body` with the offset, flags and key size of each node of the page in `page`, after
    /// checking that the node, its key and (in a leaf) its data lie inside the page.
    private func forEachNode(
        leaf: Bool, _ body: (_ offset: Int, _ flags: UInt16, _ keySize: Int) throws(DefaultsError) -> Void
    ) throws(DefaultsError) {
        let lower = Int(try uint16(at: word + 4))
        let upper = Int(try uint16(at: word + 6))
        guard lower >= headerSize, lower <= upper, upper <= pageSize else { throw damaged("A page of the data file is damaged.") }
        for index in 0..<(lower - headerSize) / 2 {
            let offset = Int(try uint16(at: headerSize + 2 * index))
            guard offset >= upper, offset + 8 <= pageSize else { throw damaged("A page of the data file is damaged.") }
            let flags = try uint16(at: offset + 4)
            let keySize = Int(try uint16(at: offset + 6))
            var end = offset + 8 + keySize
            if leaf {
                // The data: inline bytes, or an overflow page number for a big value.
                let size = flags & Self.bigDataNode != 0
                    ? word : Int(try uint16(at: offset)) | Int(try uint16(at: offset + 2)) << 16
                end += size
            }
            guard end <= pageSize else { throw damaged("A page of the data file is damaged.") }
            try body(offset, flags, keySize)
        }
    }

    private mutating func readPage(_ number: UInt64) throws(DefaultsError) {
        guard number < UInt64(filePages), number <= lastPage else { throw truncated(number) }
        if page.count != pageSize { page = [UInt8](repeating: 0, count: pageSize) }
        let offset = off_t(number) * off_t(pageSize)
        let count = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, pageSize, offset) }
        guard count == pageSize else {
            if count < 0 { throw DefaultsError.lmdb(errno, "read the data file", path: path) }
            throw truncated(number)
        }
        guard try machineWord(at: 0) == number else {
            throw damaged("Page \(number) of the data file is damaged.")
        }
    }

    private func uint16(at offset: Int) throws(DefaultsError) -> UInt16 {
        UInt16(truncatingIfNeeded: try littleEndian(at: offset, size: 2))
    }

    private func uint32(at offset: Int) throws(DefaultsError) -> UInt32 {
        UInt32(truncatingIfNeeded: try littleEndian(at: offset, size: 4))
    }

    private func machineWord(at offset: Int) throws(DefaultsError) -> UInt64 {
        try littleEndian(at: offset, size: word)
    }

    private func littleEndian(at offset: Int, size: Int) throws(DefaultsError) -> UInt64 {
        guard offset >= 0, offset + size <= page.count else { throw damaged("A page of the data file is damaged.") }
        // One unaligned load per field: the walk reads several fields of every node of every page,
        // and a byte-by-byte loop was most of the time it takes to open a store.
        return page.withUnsafeBytes { bytes in
            switch size {
            case 2: UInt64(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            case 4: UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            case 8: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            default: bytes[offset..<offset + size].reversed().reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
    }

    private func truncated(_ number: UInt64) -> DefaultsError {
        DefaultsError(
            .corrupted,
            "The data file is truncated: it ends before page \(number), which holds stored data. Restore it from a backup.",
            backend: LMDBProvider.backend, path: path)
    }

    private func damaged(_ message: String) -> DefaultsError {
        DefaultsError(.corrupted, message, backend: LMDBProvider.backend, path: path)
    }
}
