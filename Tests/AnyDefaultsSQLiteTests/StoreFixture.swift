import AnyDefaultsSQLite
import TestSupport

/// Runs `body` with a new store, `store.sqlite` in a fresh temporary directory that is removed
/// afterwards.
func withStore<T>(_ body: (SQLiteProvider, TemporaryDirectory) throws -> T) throws -> T {
    try withTemporaryDirectory { directory in
        try body(try SQLiteProvider(path: directory.path("store.sqlite")), directory)
    }
}
