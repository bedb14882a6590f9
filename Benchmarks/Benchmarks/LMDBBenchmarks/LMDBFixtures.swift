import AnyDefaultsCore
import AnyDefaultsLMDB
import CLMDB
import Foundation
import Synchronization

/// Holds the fixtures between the benchmarks' setup and teardown.
final class LMDBFixtureSlot: Sendable {
    struct NotSetUp: Error {}

    private let current = Mutex<LMDBFixtures?>(nil)

    func create() throws {
        let fixtures = try LMDBFixtures()
        current.withLock { $0 = fixtures }
    }

    func fixtures() throws -> LMDBFixtures {
        guard let fixtures = current.withLock({ $0 }) else { throw NotSetUp() }
        return fixtures
    }

    /// Closes the stores and removes their files.
    func remove() {
        let fixtures = current.withLock { current in
            defer { current = nil }
            return current
        }
        fixtures?.remove()
    }
}

/// The stores the benchmarks use: for each sync setting, one opened through LMDBProvider and one
/// opened with the C API, each in its own directory (LMDB allows one environment per file per
/// process), holding the same 1000 keys.
final class LMDBFixtures: Sendable {
    static let readKey = "settings.500"
    static let keyCount = 1000

    let directory: URL
    let providers: [LMDBProvider.Options.Durability: LMDBProvider]
    /// Stores that another process watches (a lease on the change log is recorded), so that each
    /// write also logs the key it changed.
    let watched: [LMDBProvider.Options.Durability: LMDBProvider]
    let raw: [LMDBProvider.Options.Durability: RawLMDBStore]
    private let counter = Atomic<Int64>(0)

    /// A number never returned before, so that every write stores a new value.
    func nextNumber() -> Int64 {
        counter.add(1, ordering: .relaxed).newValue
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdb-benchmarks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let seed = (0..<Self.keyCount).map { DefaultsChange.set("settings.\($0)", .int(Int64($0))) }
        var providers: [LMDBProvider.Options.Durability: LMDBProvider] = [:]
        var raw: [LMDBProvider.Options.Durability: RawLMDBStore] = [:]
        var watched: [LMDBProvider.Options.Durability: LMDBProvider] = [:]
        for durability in [LMDBProvider.Options.Durability.synced, .noSync] {
            let name = durability == .synced ? "synced" : "nosync"
            let provider = try LMDBProvider(
                path: directory.appendingPathComponent("provider-\(name)").path, options: .init(durability: durability))
            try provider.apply(seed)
            providers[durability] = provider
            let store = try RawLMDBStore(path: directory.appendingPathComponent("raw-\(name)").path, noSync: durability == .noSync)
            for index in 0..<Self.keyCount { store.write(key: "settings.\(index)", value: Int64(index)) }
            raw[durability] = store
            let watchedPath = directory.appendingPathComponent("watched-\(name)").path
            let seeding = try LMDBProvider(path: watchedPath, options: .init(durability: durability))
            try seeding.apply(seed)
            seeding.close()
            try RawLMDBStore.leaseToAnotherProcess(path: watchedPath)
            watched[durability] = try LMDBProvider(path: watchedPath, options: .init(durability: durability))
        }
        self.providers = providers
        self.watched = watched
        self.raw = raw
    }

    func remove() {
        for provider in providers.values { provider.close() }
        for provider in watched.values { provider.close() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// An LMDB environment driven through the C API, as a C program would.
///
/// `@unchecked Sendable`: the benchmarks use it from one thread at a time, and its read
/// transaction (which `MDB_NOTLS` lets move between threads) is only touched inside `read`.
final class RawLMDBStore: @unchecked Sendable {
    struct Failure: Error { var code: Int32 }

    private let env: OpaquePointer
    private let dbi: MDB_dbi
    private let readTransaction: OpaquePointer

    init(path: String, noSync: Bool) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var env: OpaquePointer?
        guard mdb_env_create(&env) == MDB_SUCCESS, let env else { throw Failure(code: -1) }
        var rc = mdb_env_open(env, path, UInt32(MDB_NOTLS) | (noSync ? UInt32(MDB_NOSYNC) : 0), 0o600)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
        var txn: OpaquePointer?
        rc = mdb_txn_begin(env, nil, 0, &txn)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
        var dbi: MDB_dbi = 0
        rc = mdb_dbi_open(txn, nil, 0, &dbi)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
        rc = mdb_txn_commit(txn)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
        var reader: OpaquePointer?
        rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &reader)
        guard rc == MDB_SUCCESS, let reader else { throw Failure(code: rc) }
        mdb_txn_reset(reader)
        self.env = env
        self.dbi = dbi
        readTransaction = reader
    }

    deinit {
        mdb_txn_abort(readTransaction)
        mdb_env_close(env)
    }

    /// Records a lease on the change log of the AnyDefaults store at `path` for a process that is
    /// not this one (key `0xFE "lease."` + origin, data: when it ends, both 8 bytes big-endian), as
    /// a process watching the store holds (until 2100). Only while no provider has the store open
    /// here.
    static func leaseToAnotherProcess(path: String) throws {
        func bigEndian(_ value: Int64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * Int64($0))) } }
        try RawLMDBStore(path: path, noSync: false).put([0xFE] + Array("lease.".utf8) + bigEndian(42), bigEndian(4_102_444_800))
    }

    /// Stores `value` under `key` in its own write transaction.
    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        var txn: OpaquePointer?
        var rc = mdb_txn_begin(env, nil, 0, &txn)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
        var key = key
        var value = value
        rc = key.withUnsafeMutableBytes { key in
            value.withUnsafeMutableBytes { value in
                var keyVal = MDB_val(mv_size: key.count, mv_data: key.baseAddress)
                var data = MDB_val(mv_size: value.count, mv_data: value.baseAddress)
                return mdb_put(txn, dbi, &keyVal, &data, 0)
            }
        }
        guard rc == MDB_SUCCESS else {
            mdb_txn_abort(txn)
            throw Failure(code: rc)
        }
        rc = mdb_txn_commit(txn)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
    }

    /// The first byte of the value stored under `key`, read in the renewed read transaction.
    func read(_ key: String) -> UInt8? {
        var key = key
        return key.withUTF8 { utf8 in
            guard mdb_txn_renew(readTransaction) == MDB_SUCCESS else { return nil }
            defer { mdb_txn_reset(readTransaction) }
            var keyVal = MDB_val(mv_size: utf8.count, mv_data: UnsafeMutableRawPointer(mutating: utf8.baseAddress))
            var data = MDB_val()
            guard mdb_get(readTransaction, dbi, &keyVal, &data) == MDB_SUCCESS, data.mv_size > 0 else { return nil }
            return data.mv_data.load(as: UInt8.self)
        }
    }

    /// Stores `value` (8 bytes) under `key` in its own write transaction.
    func write(key: String, value: Int64) {
        var key = key
        var value = value
        key.withUTF8 { utf8 in
            var txn: OpaquePointer?
            guard mdb_txn_begin(env, nil, 0, &txn) == MDB_SUCCESS else { return }
            var keyVal = MDB_val(mv_size: utf8.count, mv_data: UnsafeMutableRawPointer(mutating: utf8.baseAddress))
            withUnsafeMutableBytes(of: &value) { bytes in
                var data = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                _ = mdb_put(txn, dbi, &keyVal, &data, 0)
            }
            _ = mdb_txn_commit(txn)
        }
    }
}
