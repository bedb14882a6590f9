import AnyDefaultsCore
import CLMDB
import Foundation
import Synchronization

import AnyDefaultsPlatform

/// The environment's `MDB_env` pointer, and the identity of the data file it has open: both
/// change when the data file is replaced under the store and the environment opens it again
/// (``LMDBEnvironment/reopen()``).
///
/// `@unchecked Sendable`: LMDB allows one environment to be used from many threads for what this
/// backend does with it (transactions, statistics). The exceptions are kept by
/// ``LMDBEnvironment``: `mdb_env_set_mapsize`, `mdb_env_close` and the replacement of `pointer`
/// happen only inside the gate's exclusive section (no transaction open, none beginning), the
/// replacement also under the writer lock; `mdb_env_set_flags` only under the writer lock. Every
/// other use of `pointer` is inside the gate or under the writer lock, which orders it after
/// such a section.
final class LMDBEnvironmentHandle: @unchecked Sendable {
    /// `nil` once closed, or while a replaced data file could not be opened yet.
    var pointer: OpaquePointer?
    /// ``AnyDefaultsCore/SharedChangeCounter/identity(_:)`` of the data file open.
    let dataFile = Atomic<UInt64>(0)
    /// LMDB's descriptor of the data file open (-1 while none is).
    let dataDescriptor = Atomic<Int32>(-1)
    /// How much of the data file has its disk space reserved, with `MDB_WRITEMAP` (see
    /// `LMDBEnvironment.reserveMapForWrites`). Changed under the write lock only.
    let reservedMapSize = Atomic<Int>(0)

    init(pointer: OpaquePointer, dataFile: UInt64) {
        self.pointer = pointer
        self.dataFile.store(dataFile, ordering: .releasing)
        var descriptor: mdb_filehandle_t = -1
        if mdb_env_get_fd(pointer, &descriptor) == MDB_SUCCESS { dataDescriptor.store(descriptor, ordering: .releasing) }
    }
}

/// One open LMDB environment: the only one for its directory in this process (LMDB forbids two),
/// shared by every ``LMDBProvider`` opened on that directory through ``LMDBEnvironmentRegistry``.
final class LMDBEnvironment: Sendable {
    /// The canonical path of the store's directory.
    let path: String
    /// The path of its data file.
    let dataFilePath: String
    let dbi: MDB_dbi
    let handle: LMDBEnvironmentHandle
    let gate = LMDBTransactionGate()
    let maximumMapSize: Int
    /// The options of the provider that opened it, for opening the data file again.
    let options: LMDBProvider.Options
    /// Taken around every write transaction, so that waiting for another process's is bounded.
    let writeLock: LMDBWriteLock
    /// When a read last checked that the data file is still the one open
    /// (``checkDataFile(always:)``), in ``AnyDefaultsCore/CoarseClock`` nanoseconds.
    let dataFileCheckedAt = Atomic<UInt64>(0)

    /// The count of every process's commits to the store (the file `counter` in its directory),
    /// through which caches in front of its providers stay coherent with other processes.
    let changeCounter: SharedChangeCounter
    /// Serialises this process's write transactions (LMDB also serialises them across processes)
    /// and orders their change events, also those read from the change log.
    let writer: Mutex<WriterState>
    /// The watch for other processes' commits, while there is one. Taken before `writer`.
    let watching = Mutex<LMDBWatching?>(nil)
    /// While the data file is replaced or gone and the store not yet opened again: the watch to
    /// start again once it is, and the values the observers last heard of.
    let following = Mutex<LMDBFollowing?>(nil)
    /// The change broadcasters of the providers using this environment, by token, so that a write
    /// through one provider reaches the observers of the others as an external change.
    let listeners = InstanceListeners()

    /// What the writer lock guards.
    struct WriterState {
        /// Whether `MDB_NOSYNC` is currently set.
        var syncIsOff: Bool
        /// The change-log position this process has accounted for, while it watches.
        var logPosition: Int64?
        /// The id of the last write transaction that accounted for the change log: if the next
        /// one's id follows it, no one committed in between, so the log holds nothing new.
        var logCheckedAt: Int?
        /// What the last write transaction found about other processes' leases (`nil`: none,
        /// else when the one found ends), and that transaction's id. Leases are taken and given
        /// back by commits, so while the next transaction's id follows it, the finding holds
        /// (until that lease's end): the writer skips scanning the leases again.
        var leaseFinding: (transaction: Int, watchedUntil: Int64?)?
    }

    // MARK: Opening and closing

    /// Opens the environment in the existing directory `path` (canonical), checks that it is an
    /// AnyDefaults store that is whole, and marks a new one as such.
    init(path: String, options: LMDBProvider.Options) throws(DefaultsError) {
        self.path = path
        dataFilePath = path + "/data.mdb"
        self.options = options
        // The maximum is what was asked for: a smaller maximum than the initial size caps the
        // initial map (the default initial 4 MiB must not lift `maxsize=1MiB`).
        maximumMapSize = Self.rounded(max(options.maximumMapSize, 1), to: Int(getpagesize()))
        writer = Mutex(WriterState(syncIsOff: options.durability != .synced))
        changeCounter = try SharedChangeCounter(
            file: path + "/counter", backend: LMDBProvider.backend, likeFile: path + "/data.mdb")
        writeLock = try LMDBWriteLock(directory: path)
        let opened: (pointer: OpaquePointer, dbi: MDB_dbi, dataFile: UInt64)
        do throws(DefaultsError) {
            opened = try Self.openEnvironment(path: path, options: options, maximumMapSize: maximumMapSize, counter: changeCounter)
        } catch {
            writeLock.closeDirectory()
            throw error
        }
        handle = LMDBEnvironmentHandle(pointer: opened.pointer, dataFile: opened.dataFile)
        dbi = opened.dbi
        changeCounter.onCatchUp { [weak self] in self?.catchUpWithOtherProcesses() ?? false }
        // From here on, deinit closes the environment if this initializer throws.
        try prepareStore()
    }

    /// Opens the environment in `path` and checks it (see ``init(path:options:)``), once the files
    /// beside the data file belong to it (``LMDBEnvironment/claimLockFile(path:counter:timeout:)``).
    static func openEnvironment(
        path: String, options: LMDBProvider.Options, maximumMapSize: Int, counter: SharedChangeCounter
    ) throws(DefaultsError) -> (pointer: OpaquePointer, dbi: MDB_dbi, dataFile: UInt64) {
        let recorded = try claimLockFile(path: path, counter: counter, timeout: options.lockTimeout)
        let readOnly = try LMDBFiles.prepare(directory: path)
        var pointer: OpaquePointer?
        var rc = mdb_env_create(&pointer)
        guard rc == MDB_SUCCESS, let pointer else { throw DefaultsError.lmdb(rc, "create an LMDB environment", path: path) }
        var opened = false
        defer { if !opened { mdb_env_close(pointer) } }

        rc = mdb_env_set_mapsize(pointer, rounded(min(options.initialMapSize, maximumMapSize), to: Int(getpagesize())))
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "set the map size", path: path) }
        // MDB_NOTLS: read transactions belong to calls, not threads (see LMDBTransactionGate).
        // MDB_RDONLY: a store that cannot be written is read; its writes fail with EACCES.
        // MDB_WRITEMAP (durability `mapped`): commits write the map in place, no system call.
        let flags = UInt32(MDB_NOTLS) | (options.durability != .synced ? UInt32(MDB_NOSYNC) : 0)
            | (readOnly ? UInt32(MDB_RDONLY) : 0)
            | (options.durability == .mapped && !readOnly && writeMapIsSupported ? UInt32(MDB_WRITEMAP) : 0)
        rc = mdb_env_open(pointer, path, flags, 0o600)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "open the store", path: path) }

        // Free the reader slots of processes that died holding them.
        var stale: Int32 = 0
        rc = mdb_reader_check(pointer, &stale)
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "clear stale readers", path: path) }

        guard mdb_env_get_maxkeysize(pointer) >= Int32(LMDBKeyScheme.directKeyLimit) else {
            throw DefaultsError(
                .unsupported,
                "The LMDB library accepts keys of at most \(mdb_env_get_maxkeysize(pointer)) bytes; AnyDefaults stores need \(LMDBKeyScheme.directKeyLimit).",
                backend: LMDBProvider.backend, path: path)
        }
        // The check and the main database's handle, each in a snapshot of its own: other
        // processes may be committing (and growing the map) meanwhile.
        var checked = false
        for _ in 0..<1000 where !checked {
            checked = try inSnapshot(pointer, path: path) { transaction throws(DefaultsError) in
                try LMDBFileCheck.verify(environment: pointer, snapshot: transaction, path: path)
            }
        }
        guard checked else {
            throw DefaultsError(
                .busy, "Could not check the data file: other processes kept committing while it was read.",
                backend: LMDBProvider.backend, path: path)
        }
        let dbi = try inSnapshot(pointer, path: path) { transaction throws(DefaultsError) in
            var dbi: MDB_dbi = 0
            let rc = mdb_dbi_open(transaction, nil, 0, &dbi)
            guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "open the store", path: path) }
            return dbi
        }
        let dataFile = try dataFileIdentity(pointer, path: path)
        counter.recordStoreIdentity(dataFile, replacing: recorded)
        opened = true
        return (pointer, dbi, dataFile)
    }

    deinit {
        close()
    }

    /// Stops watching for other processes' changes and closes the environment once the
    /// transactions under way have ended; later calls fail with
    /// ``DefaultsError/Code-swift.struct/closed``.
    func close() {
        following.withLock { $0 = nil }
        stopWatching()
        gate.exclusive(closing: true) { pooled in
            for transaction in pooled { mdb_txn_abort(transaction) }
            if let pointer = handle.pointer { mdb_env_close(pointer) }
            handle.pointer = nil
            handle.dataDescriptor.store(-1, ordering: .releasing)
            writeLock.closeDirectory()
        }
    }

    /// Runs `body` in a read transaction of the environment `env`, which no other thread uses yet
    /// (so it may adopt a new map size without the gate). The transaction pins its snapshot: no
    /// page it can reach is reused by a writer (of any process) until it ends.
    static func inSnapshot<T>(
        _ env: OpaquePointer, path: String, _ body: (OpaquePointer) throws(DefaultsError) -> T
    ) throws(DefaultsError) -> T {
        while true {
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            if rc == MDB_MAP_RESIZED {
                // Another process grew the map beyond this one's: take on its size.
                let rc = mdb_env_set_mapsize(env, 0)
                guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "adopt the new map size", path: path) }
                continue
            }
            guard rc == MDB_SUCCESS, let txn else { throw DefaultsError.lmdb(rc, "open the store", path: path) }
            defer { mdb_txn_abort(txn) }
            return try body(txn)
        }
    }

    /// Checks the format marker, writes it into a new, empty store, and brings an older store to
    /// this format.
    func prepareStore() throws(DefaultsError) {
        let version = try read { transaction throws(DefaultsError) in try transaction.checkFormatMarker() }
        guard version != LMDBKeyScheme.storeFormatVersion else { return }
        try commitWithGrowth(estimatedSize: 0) { transaction throws(DefaultsError) in
            try transaction.markNewStore()
        }
    }

    // MARK: Transactions

    /// Runs `body` in a read transaction (a pooled one, renewed, where possible).
    func read<T>(_ body: (LMDBTransaction) throws(DefaultsError) -> T) throws(DefaultsError) -> T {
        let lease = try beginRead()
        defer { endRead(lease) }
        return try body(LMDBTransaction(pointer: lease.pointer, dbi: dbi, environment: self))
    }

    /// The value stored under the canonical key `key`: ``read(_:)`` for the hot path, without a
    /// closure.
    func value(forKey key: String, scheme: LMDBKeyScheme) throws(DefaultsError) -> DefaultsValue? {
        let lease = try beginRead()
        defer { endRead(lease) }
        return try LMDBTransaction(pointer: lease.pointer, dbi: dbi, environment: self).value(forKey: key, scheme: scheme)
    }

    /// A read transaction in use, and the slot of the gate it came from (`nil` if unpooled).
    private struct ReadLease {
        var slot: LMDBTransactionGate.Slot?
        let pointer: OpaquePointer
    }

    /// Enters the gate and renews a pooled read transaction, or begins one.
    @inline(__always)
    private func beginRead() throws(DefaultsError) -> ReadLease {
        var clearedReaders = false
        while true {
            let slot = try entering { () throws(LMDBTransactionGate.Closed) in try gate.enterReader() }
            var pointer = slot?.transaction
            let rc: Int32
            if let pointer {
                rc = mdb_txn_renew(pointer)
            } else if let environment = handle.pointer {
                rc = mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &pointer)
            } else {
                rc = MDB_BAD_TXN
            }
            if rc == MDB_SUCCESS, let pointer { return ReadLease(slot: slot, pointer: pointer) }

            if let pointer { mdb_txn_abort(pointer) }
            if var slot {
                slot.transaction = nil
                gate.leave(slot)
            } else {
                gate.leaveUnpooled()
            }
            if rc == MDB_MAP_RESIZED {
                try adoptMapSize()
                continue
            }
            if rc == MDB_READERS_FULL, !clearedReaders {
                clearedReaders = true
                clearStaleReaders()
                continue
            }
            if handle.pointer == nil { throw notReopenedError }
            throw DefaultsError.lmdb(rc, "begin a read transaction", path: path)
        }
    }

    /// Resets a pooled read transaction and returns it to its slot, or aborts an unpooled one.
    @inline(__always)
    private func endRead(_ lease: ReadLease) {
        if var slot = lease.slot {
            mdb_txn_reset(lease.pointer)
            slot.transaction = lease.pointer
            gate.leave(slot)
        } else {
            mdb_txn_abort(lease.pointer)
            gate.leaveUnpooled()
        }
    }

    /// Runs `body` in a write transaction and commits it; then queues the events it returns for
    /// every provider on this environment, `origin`'s as local and the others' as external, and
    /// delivers them once the locks are released.
    ///
    /// When the map is full the transaction is rolled back, the map grown and `body` run again, so
    /// `body` must compute everything from the transaction. `estimatedSize` (the bytes the changes
    /// add) guides the growth.
    ///
    /// Inside the transaction, if some other process watches the store, the keys that changed are
    /// appended to the change log for it; and if this process watches too and anyone here observes,
    /// what other processes logged since this process last looked is read first and reported
    /// before this write's events, as `.external`.
    ///
    /// Afterwards it counts the commit (``changeCounter``) and tells the caches of the other
    /// providers (those not in front of `provider`) what it changed.
    func write(
        noSync: Bool, estimatedSize: Int, origin: Int, provider: AnyObject, scheme: LMDBKeyScheme,
        _ body: (LMDBTransaction) throws(DefaultsError) -> [DefaultsChangeEvent]
    ) throws(DefaultsError) {
        let observed = isObserved
        let broadcasters = try writer.withLock { (state: inout WriterState) throws(DefaultsError) -> [ChangeBroadcaster] in
            if state.syncIsOff != noSync {
                // Providers on one environment may differ in durability. Only this lock's holder
                // commits, so the flag applies to exactly this provider's writes (readers never
                // look at it).
                guard let environment = handle.pointer else { throw notReopenedError }
                let rc = mdb_env_set_flags(environment, UInt32(MDB_NOSYNC), noSync ? 1 : 0)
                guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "set the durability", path: path) }
                state.syncIsOff = noSync
            }
            let position = observed ? state.logPosition : nil
            let checkedAt = state.logCheckedAt
            let leaseFinding = state.leaseFinding
            var transactionID = 0
            var newLeaseFinding: Int64??
            let (earlier, events, logged) = try commitWithGrowth(estimatedSize: estimatedSize) {
                transaction throws(DefaultsError) -> (ChangeLog.Report?, [DefaultsChangeEvent], Bool) in
                transactionID = mdb_txn_id(transaction.pointer)
                let earlier = try position.map { position throws(DefaultsError) -> ChangeLog.Report in
                    // Reading the log costs more than most writes; skipped when nothing committed.
                    if let checkedAt, transactionID == checkedAt &+ 1 {
                        return ChangeLog.Report(events: [], end: position, complete: true)
                    }
                    return try transaction.externalEvents(after: position, trusted: true, scheme: scheme)
                }
                let events = try body(transaction)
                let now = ChangeLog.now
                guard !events.isEmpty else { return (earlier, events, false) }
                let watchedUntil: Int64?
                if let leaseFinding, transactionID == leaseFinding.transaction &+ 1,
                    leaseFinding.watchedUntil.map({ now < $0 }) ?? true {
                    watchedUntil = leaseFinding.watchedUntil
                } else {
                    watchedUntil = try transaction.watchedUntil(byOtherThan: ChangeLog.processOrigin, now: now)
                }
                newLeaseFinding = .some(watchedUntil)
                guard watchedUntil != nil else { return (earlier, events, false) }
                try transaction.appendToLog(events.map(\.key), origin: ChangeLog.processOrigin, now: now)
                return (earlier, events, true)
            }
            if !events.isEmpty {
                changeCounter.committed()
                changeCounter.invalidate(keysOf: events, exceptCachesOf: provider)
            }
            if logged { ChangeLog.ringDoorbell(path: path + "/data.mdb") }
            if let newLeaseFinding { state.leaseFinding = (transactionID, newLeaseFinding) }
            if let earlier, state.logPosition != nil {
                earlier.invalidate(in: changeCounter)
                state.logPosition = earlier.end
                state.logCheckedAt = transactionID
            }
            return listeners.enqueue(events, from: origin, after: earlier?.events ?? [])
        }
        for broadcaster in broadcasters { broadcaster.deliverPending() }
    }

    /// Whether anyone would receive events: an observer of a provider, or a cache registered with
    /// the change counter.
    var isObserved: Bool {
        listeners.hasObservers || changeCounter.hasCaches
    }

    /// Flushes what every commit wrote to the disk (`mdb_env_sync`, forced), whatever the
    /// durability the store was opened with: with `MDB_NOSYNC` the data pages, with
    /// `MDB_WRITEMAP` the map.
    func syncToDisk() throws(DefaultsError) {
        try entering { () throws(LMDBTransactionGate.Closed) in try gate.enterUnpooled() }
        defer { gate.leaveUnpooled() }
        guard let environment = handle.pointer else { throw notReopenedError }
        let rc = mdb_env_sync(environment, 1)
        // A store opened read-only has written nothing to flush.
        guard rc == MDB_SUCCESS || rc == EACCES else { throw DefaultsError.lmdb(rc, "sync the store to disk", path: path) }
    }

    ///
    /// `lockTimeout` replaces the store's for this commit (`.zero`: only if the lock is free, or
    /// its holder is dying).
    func commitWithGrowth<Result>(
        estimatedSize: Int, lockTimeout: Duration? = nil, _ body: (LMDBTransaction) throws(DefaultsError) -> Result
    ) throws(DefaultsError) -> Result {
        // A reader slot left by a process that died pins the pages of its snapshot, which no
        // commit can reuse until the slot is freed; only an open or a full reader table frees it
        // otherwise, so a full map frees such slots once before it grows.
        var clearedReaders = false
        while true {
            // Outside the gate: waiting here must not hold up a resize.
            let waited = try writeLock.acquire(timeout: lockTimeout ?? options.lockTimeout)
            defer { writeLock.release() }
            // A data file renamed over (or deleted) while this write waited must not receive it:
            // the provider opens the new one and writes there (`LMDBDataFileReplaced`).
            if waited, dataFileIsUnlinked {
                throw DefaultsError(
                    .busy, "The store's data file was replaced while this write waited for the lock.",
                    backend: LMDBProvider.backend, path: path, cause: LMDBDataFileReplaced())
            }
            try entering { () throws(LMDBTransactionGate.Closed) in try gate.enterUnpooled() }
            var pointer: OpaquePointer?
            guard let environment = handle.pointer else {
                gate.leaveUnpooled()
                throw notReopenedError
            }
            do throws(DefaultsError) {
                try reserveMapForWrites(environment)
            } catch {
                gate.leaveUnpooled()
                throw error
            }
            let rc = mdb_txn_begin(environment, nil, 0, &pointer)
            guard rc == MDB_SUCCESS, let pointer else {
                gate.leaveUnpooled()
                if rc == MDB_MAP_RESIZED {
                    try adoptMapSize()
                    continue
                }
                if rc == EACCES {
                    // Opened read-only (MDB_RDONLY): the store could be read but not written.
                    throw DefaultsError(
                        .permissionDenied, "The store is read-only: its data file or its file system cannot be written. Nothing was changed.",
                        backend: LMDBProvider.backend, path: path, cause: LMDBFailure(rc))
                }
                throw DefaultsError.lmdb(rc, "begin a write transaction", path: path)
            }
            let outcome: Swift.Result<Result, DefaultsError>
            do throws(DefaultsError) {
                let result = try body(LMDBTransaction(pointer: pointer, dbi: dbi, environment: self))
                let rc = mdb_txn_commit(pointer)  // frees the transaction, also when it fails
                outcome = rc == MDB_SUCCESS
                    ? .success(result) : .failure(DefaultsError.lmdb(rc, "commit the changes", path: path))
            } catch {
                mdb_txn_abort(pointer)
                outcome = .failure(error)
            }
            gate.leaveUnpooled()
            switch outcome {
            case .success(let result):
                return result
            case .failure(let error) where error.isMapFull:
                if !clearedReaders {
                    clearedReaders = true
                    if clearStaleReaders() > 0 { continue }
                }
                try growMap(by: estimatedSize, cause: error)
            case .failure(let error):
                throw error
            }
        }
    }

    /// Enters the gate through `enter`, turning a closed gate into a `closed` error.
    private func entering<T>(_ enter: () throws(LMDBTransactionGate.Closed) -> T) throws(DefaultsError) -> T {
        do {
            return try enter()
        } catch {
            throw closedError
        }
    }

    /// The error of a call made while a replaced data file could not be opened yet.
    var notReopenedError: DefaultsError {
        DefaultsError(
            .busy, "The store's data file was replaced and could not be opened again yet; the next call tries again.",
            backend: LMDBProvider.backend, path: path)
    }

    /// Frees the reader slots of processes that died holding them (the reader table is in the
    /// lock file; entered like a transaction, as the environment may be replaced meanwhile).
    /// Returns how many were freed.
    @discardableResult
    private func clearStaleReaders() -> Int {
        let freed = readingMetaPages { () -> Int32 in
            var stale: Int32 = 0
            if let environment = handle.pointer { mdb_reader_check(environment, &stale) }
            return stale
        }
        return Int(freed ?? 0)
    }

    private var closedError: DefaultsError {
        DefaultsError(.closed, "The store is closed.", backend: LMDBProvider.backend, path: path)
    }

    // MARK: Map size

    /// The size of the map now (0 once closed).
    var mapSize: Int {
        readingMetaPages { currentMapSize } ?? 0
    }

    /// The size of the map, read from LMDB's environment info. Only inside the gate: see
    /// ``readingMetaPages(_:)``.
    private var currentMapSize: Int {
        guard let environment = handle.pointer else { return 0 }
        var info = MDB_envinfo()
        mdb_env_info(environment, &info)
        return info.me_mapsize
    }

    /// The ID of the environment's last committed transaction, by any process (read from the
    /// newer meta page); `nil` once closed.
    var lastTransaction: Int? {
        readingMetaPages { () -> Int? in
            guard let environment = handle.pointer else { return nil }
            var info = MDB_envinfo()
            mdb_env_info(environment, &info)
            return info.me_last_txnid
        } ?? nil
    }

    /// Runs `body`, which reads the map outside a transaction (`mdb_env_info` and `mdb_env_stat`
    /// read the meta pages, which live in the map), inside the gate like a transaction: growing or
    /// adopting the map size unmaps the file and maps it again, and a read of the old map in
    /// between stops the process with SIGSEGV. Returns `nil` once the environment is closed.
    ///
    /// Every LMDB call that reaches the map runs inside the gate: transactions (and the calls on
    /// them: gets, puts, cursors, `mdb_txn_id`, `mdb_stat`), and these reads. What stays outside
    /// touches only the lock file or the environment's own fields: `mdb_reader_check` (the reader
    /// table in `lock.mdb`, which is never remapped), `mdb_env_set_flags` (under the writer lock),
    /// `mdb_env_get_fd`, `mdb_env_get_maxkeysize`, and everything done in ``init(path:options:)``
    /// before the environment is shared.
    func readingMetaPages<T>(_ body: () -> T) -> T? {
        guard (try? gate.enterUnpooled()) != nil else { return nil }
        defer { gate.leaveUnpooled() }
        return body()
    }

    /// Takes on the larger map another process has set (after `MDB_MAP_RESIZED`). It maps the
    /// file again even when the size is unchanged.
    func adoptMapSize() throws(DefaultsError) {
        let rc = gate.exclusive { _ in handle.pointer.map { mdb_env_set_mapsize($0, 0) } ?? MDB_BAD_TXN }
        guard let rc else { throw closedError }
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "adopt the new map size", path: path) }
    }

    /// Grows the map after `MDB_MAP_FULL`: at least doubles it, and makes room for twice `size`
    /// more bytes, up to the maximum.
    private func growMap(by size: Int, cause: DefaultsError) throws(DefaultsError) {
        let rc = try gate.exclusive { _ throws(DefaultsError) -> Int32 in
            let current = currentMapSize
            guard current < maximumMapSize else {
                throw DefaultsError(
                    .storageFull,
                    "The store has reached its maximum size of \(maximumMapSize) bytes; open it with a larger one (LMDBProvider.Options.maximumMapSize, or maxsize= in a store string: lmdb:DIR?maxsize=8GiB).",
                    backend: LMDBProvider.backend, path: path, cause: cause.cause)
            }
            let (doubled, overflow) = current.multipliedReportingOverflow(by: 2)
            let wanted = max(overflow ? Int.max : doubled, current.addingClamped(size.multipliedClamped(by: 2)))
            let target = min(Self.rounded(wanted, to: Int(getpagesize())), maximumMapSize)
            guard let environment = handle.pointer else { throw notReopenedError }
            return mdb_env_set_mapsize(environment, target)
        }
        guard let rc else { throw closedError }
        guard rc == MDB_SUCCESS else { throw DefaultsError.lmdb(rc, "grow the map", path: path) }
    }

    /// Whether this platform opens `mapped` stores with `MDB_WRITEMAP`: where the map's disk
    /// space can be reserved (`posix_fallocate`), so that a full disk fails a write instead of
    /// stopping the process with SIGBUS on a page of a sparse file.
    static var writeMapIsSupported: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// With `MDB_WRITEMAP`, gives the whole map disk space before a write transaction may dirty
    /// it (the map grows, here or in another process, and LMDB extends the file sparsely).
    /// Inside the gate, under the write lock.
    private func reserveMapForWrites(_ environment: OpaquePointer) throws(DefaultsError) {
        #if os(Linux)
        var flags: UInt32 = 0
        guard mdb_env_get_flags(environment, &flags) == MDB_SUCCESS, flags & UInt32(MDB_WRITEMAP) != 0 else { return }
        var info = MDB_envinfo()
        guard mdb_env_info(environment, &info) == MDB_SUCCESS else { return }
        let size = info.me_mapsize
        guard handle.reservedMapSize.load(ordering: .relaxed) < size else { return }
        let descriptor = handle.dataDescriptor.load(ordering: .acquiring)
        let rc = posix_fallocate(descriptor, 0, off_t(size))
        guard rc == 0 else {
            let cause = SystemCallError(call: "posix_fallocate", path: dataFilePath, number: rc)
            throw DefaultsError(
                rc == ENOSPC || rc == EDQUOT ? .storageFull : .ioFailure,
                "Disk space for the store's map (\(size) bytes) could not be reserved; nothing was changed.",
                backend: LMDBProvider.backend, path: path, cause: cause)
        }
        handle.reservedMapSize.store(size, ordering: .relaxed)
        #endif
    }

    static func rounded(_ size: Int, to pageSize: Int) -> Int {
        let size = max(size, pageSize)
        let remainder = size % pageSize
        return remainder == 0 ? size : size.addingClamped(pageSize - remainder) / pageSize * pageSize
    }
}

extension Int {
    fileprivate func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    fileprivate func multipliedClamped(by other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? .max : product
    }
}
