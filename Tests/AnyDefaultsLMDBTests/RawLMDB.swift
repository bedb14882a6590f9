import CLMDB
import Foundation

/// Direct LMDB access, to prepare stores the provider would never write. Use it only while no
/// provider has the store open in this process (LMDB allows one environment per file per process).
enum RawLMDB {
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var description: String { String(cString: mdb_strerror(code)) }
    }

    /// Stores each record in `records` in the store directory `path`, in one transaction.
    static func put(_ records: [(key: [UInt8], value: [UInt8])], path: String) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env))
        defer { mdb_env_close(env) }
        try check(mdb_env_open(env, path, 0, 0o600))
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, nil, 0, &dbi))
        for record in records {
            var key = record.key, value = record.value
            try key.withUnsafeMutableBytes { key in
                try value.withUnsafeMutableBytes { value in
                    var k = MDB_val(mv_size: key.count, mv_data: key.baseAddress)
                    var v = MDB_val(mv_size: value.count, mv_data: value.baseAddress)
                    try check(mdb_put(txn, dbi, &k, &v, 0))
                }
            }
        }
        try check(mdb_txn_commit(txn))
    }

    private static func check(_ code: Int32) throws {
        guard code == MDB_SUCCESS else { throw Failure(code: code) }
    }
}
