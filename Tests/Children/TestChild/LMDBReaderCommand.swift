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

/// What the reader table of the LMDB store `path` holds and the last transaction, in one line:
/// for a failure report (a full map is most often pages pinned by an old reader).
func lmdbReaderReport(_ path: String) -> String {
    var environment: OpaquePointer?
    guard mdb_env_create(&environment) == MDB_SUCCESS, mdb_env_set_mapsize(environment, 0) == MDB_SUCCESS,
        mdb_env_open(environment, path, UInt32(MDB_NOTLS | MDB_RDONLY), 0o600) == MDB_SUCCESS
    else { return "the store could not be opened to list its readers" }
    defer { mdb_env_close(environment) }
    var info = MDB_envinfo()
    mdb_env_info(environment, &info)
    final class Lines { var text = "" }
    let lines = Lines()
    _ = withExtendedLifetime(lines) {
        mdb_reader_list(environment, { message, context in
            guard let message, let context else { return 0 }
            Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message).replacingOccurrences(of: "\n", with: "; ")
            return 0
        }, Unmanaged.passUnretained(lines).toOpaque())
    }
    return "last transaction \(info.me_last_txnid), map \(info.me_mapsize) bytes, readers: \(lines.text)"
}
#else
func holdReader(_ arguments: Arguments) throws {
    throw Usage(description: "hold-reader: this build has no LMDB")
}

func lmdbReaderReport(_ path: String) -> String { "no LMDB in this build" }
#endif
