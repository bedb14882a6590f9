#if canImport(CLMDB)
import AnyDefaultsPlatform
import CLMDB

/// `hold-reader DIR`: opens the LMDB store `DIR` with liblmdb itself, begins a read transaction,
/// says `reading`, and keeps it open until the process is killed: a reader slot that a killed
/// process leaves in the lock file, pinning its snapshot.
func holdReader(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let path = try arguments.text(0, "store directory")
    var environment: OpaquePointer?
    var transaction: OpaquePointer?
    guard mdb_env_create(&environment) == MDB_SUCCESS, mdb_env_set_mapsize(environment, 0) == MDB_SUCCESS,
        mdb_env_open(environment, path, UInt32(MDB_NOTLS), 0o600) == MDB_SUCCESS,
        mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction) == MDB_SUCCESS
    else { throw Failure(description: "could not begin a read transaction on \(path)") }
    say("reading")
    while true { sleep(60) }
}
#else
func holdReader(_ arguments: Arguments) throws {
    throw Usage(description: "hold-reader: this build has no LMDB")
}
#endif
