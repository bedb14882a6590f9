import CSQLite
import Foundation

/// A plain SQLite connection, beside the provider, to look at and tamper with a store file the
/// way the `sqlite3` shell or another program would.
///
/// `@unchecked Sendable` is safe: the connection is opened with SQLITE_OPEN_FULLMUTEX, SQLite's
/// serialized mode, in which one connection may be used from any thread.
final class RawDatabase: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let db: OpaquePointer

    init(_ path: String) throws {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw Failure(description: "open \(path): \(rc)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { sqlite3_close_v2(db) }

    /// Runs `sql` and returns its rows, each column as text (NULL as "NULL").
    @discardableResult
    func query(_ sql: String) throws -> [[String]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                rows.append((0..<sqlite3_column_count(statement)).map { column in
                    guard let text = sqlite3_column_text(statement, column) else { return "NULL" }
                    return String(cString: text)
                })
            case SQLITE_DONE:
                return rows
            default:
                throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
    }

    /// The single value `sql` returns, as text.
    func scalar(_ sql: String) throws -> String? {
        try query(sql).first?.first
    }
}
