import CLMDB
import Foundation

/// An LMDB environment driven through the C API, as a C program would.
///
/// `@unchecked Sendable`: the benchmarks use it from one thread at a time, and its read
/// transaction (which `MDB_NOTLS` lets move between threads) is only touched inside `read`.
public final class RawLMDBStore: @unchecked Sendable {
    public struct Failure: Error { var code: Int32 }

    private let env: OpaquePointer
    private let dbi: MDB_dbi
    private let readTransaction: OpaquePointer

    /// Opens (creating if needed) the store in the directory `path`, with a map of `mapSize`
    /// bytes (LMDB's default, 10 MiB, is too small for the larger stores); `writeMap` adds
    /// `MDB_WRITEMAP` (commits write the shared map in place; issue 24's candidate).
    public init(path: String, noSync: Bool, mapSize: Int = 1 << 30, writeMap: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var env: OpaquePointer?
        guard mdb_env_create(&env) == MDB_SUCCESS, let env else { throw Failure(code: -1) }
        var rc = mdb_env_set_mapsize(env, mapSize)
        guard rc == MDB_SUCCESS else { throw Failure(code: rc) }
        let flags = UInt32(MDB_NOTLS) | (noSync ? UInt32(MDB_NOSYNC) : 0) | (writeMap ? UInt32(MDB_WRITEMAP) : 0)
        rc = mdb_env_open(env, path, flags, 0o600)
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
    public static func leaseToAnotherProcess(path: String) throws {
        func bigEndian(_ value: Int64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * Int64($0))) } }
        try RawLMDBStore(path: path, noSync: false).put([0xFE] + Array("lease.".utf8) + bigEndian(42), bigEndian(4_102_444_800))
    }

    /// Stores `value` under `key` in its own write transaction.
    public func put(_ key: [UInt8], _ value: [UInt8]) throws {
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
    public func read(_ key: String) -> UInt8? {
        var key = key
        return key.withUTF8 { utf8 in
            guard mdb_txn_renew(readTransaction) == MDB_SUCCESS else { return nil }
            defer { mdb_txn_reset(readTransaction) }
            return Self.firstByte(in: readTransaction, dbi, key: utf8)
        }
    }

    /// Stores `value` (8 bytes) under `key` in its own write transaction.
    public func write(key: String, value: Int64) {
        write(keys: CollectionOfOne(key), value: value)
    }

    /// Stores `value` (8 bytes) under each of `keys` in one write transaction.
    public func write(keys: some Sequence<String>, value: Int64) {
        write(keys.lazy.map { ($0, value) })
    }

    /// Stores each pair's value (8 bytes) under its key, all in one write transaction.
    public func write(_ pairs: some Sequence<(String, Int64)>) {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, 0, &txn) == MDB_SUCCESS else { return }
        for (key, value) in pairs {
            var key = key
            var value = value
            key.withUTF8 { utf8 in
                var keyVal = MDB_val(mv_size: utf8.count, mv_data: UnsafeMutableRawPointer(mutating: utf8.baseAddress))
                withUnsafeMutableBytes(of: &value) { bytes in
                    var data = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    _ = mdb_put(txn, dbi, &keyVal, &data, 0)
                }
            }
        }
        _ = mdb_txn_commit(txn)
    }

    /// Opens the store in `path`, reads the first byte of the value under `key` in a read
    /// transaction, and closes it: the least a program that opens the store to read one value does.
    public static func openAndRead(path: String, key: String) -> UInt8? {
        var env: OpaquePointer?
        guard mdb_env_create(&env) == MDB_SUCCESS, let env else { return nil }
        defer { mdb_env_close(env) }
        guard mdb_env_open(env, path, UInt32(MDB_NOTLS), 0o600) == MDB_SUCCESS else { return nil }
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS, let txn else { return nil }
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        guard mdb_dbi_open(txn, nil, 0, &dbi) == MDB_SUCCESS else { return nil }
        var key = key
        return key.withUTF8 { firstByte(in: txn, dbi, key: $0) }
    }

    private static func firstByte(in txn: OpaquePointer, _ dbi: MDB_dbi, key: UnsafeBufferPointer<UInt8>) -> UInt8? {
        var keyVal = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val()
        guard mdb_get(txn, dbi, &keyVal, &data) == MDB_SUCCESS, data.mv_size > 0 else { return nil }
        return data.mv_data.load(as: UInt8.self)
    }
}
