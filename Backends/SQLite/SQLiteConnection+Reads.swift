import AnyDefaultsCore
import CSQLite
import Foundation

/// Reading the store: one value, the keys and values (all, or under a prefix, by a range on the
/// primary key), and the decoding of stored rows.
extension SQLiteConnection {
    /// The value stored under the canonical `key`, or `nil`.
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        try read(key, with: try open())
    }

    /// Every stored key.
    func keys() throws(DefaultsError) -> [String] {
        try storedKeys(with: open())
    }

    /// Every stored key with its value, read in one snapshot.
    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        let statements = try open()
        var result: [String: DefaultsValue] = [:]
        let pairs = try rows(of: statements.all, action: "Reading all values") { statement throws(DefaultsError) in
            let key = try storedKey(in: statement)
            return (key, try storedValue(in: statement, type: 1, value: 2, key: key))
        }
        for (key, value) in pairs { result[key] = value }
        return result
    }

    /// The stored keys under `prefix`, in UTF-8 order: one range of the table's primary key (its
    /// `BINARY` collation is the UTF-8 byte order), so the cost follows the keys in the range.
    func keys(withPrefix prefix: DefaultsKeyPrefix) throws(DefaultsError) -> [String] {
        try inRange(prefix, columns: "key", statement: \.keysInRange, action: "Listing the keys under a prefix") {
            statement throws(DefaultsError) in try storedKey(in: statement)
        }
    }

    /// The stored keys under `prefix` with their values, read by one statement (one snapshot).
    func allValues(withPrefix prefix: DefaultsKeyPrefix) throws(DefaultsError) -> [String: DefaultsValue] {
        let pairs = try inRange(
            prefix, columns: "key, type, value", statement: \.allInRange, action: "Reading the values under a prefix"
        ) { statement throws(DefaultsError) in
            let key = try storedKey(in: statement)
            return (key, try storedValue(in: statement, type: 1, value: 2, key: key))
        }
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }

    /// The rows of the range of `prefix`, read by `row`: with the prepared `statement` when the
    /// range has an upper bound (the usual case), else with a statement prepared for the call.
    func inRange<Row>(
        _ prefix: DefaultsKeyPrefix, columns: String, statement: KeyPath<Statements, SQLiteStatement>, action: String,
        _ row: (SQLiteStatement) throws(DefaultsError) -> Row
    ) throws(DefaultsError) -> [Row] {
        let statements = try open()
        var lower = prefix.canonical
        guard var upper = prefix.upperBound else {
            let unbounded = try prepare(SQLiteSchema.rangeSQL(columns, bounded: false), persistent: false, action: action)
            defer { sqlite3_finalize(unbounded.handle) }
            try check(lower.withUTF8 { unbounded.bind(copyOfText: $0, to: 1) }, action: action)
            return try rows(of: unbounded, action: action, row)
        }
        let bounded = statements[keyPath: statement]
        try check(lower.withUTF8 { bounded.bind(copyOfText: $0, to: 1) }, action: action)
        try check(upper.withUTF8 { bounded.bind(copyOfText: $0, to: 2) }, action: action)
        return try rows(of: bounded, action: action, row)
    }

    /// The integer in the first column of the one row `statement` returns.
    func integer(from statement: SQLiteStatement, action: String) throws(DefaultsError) -> Int64 {
        defer { statement.reset() }
        let rc = statement.step()
        guard rc == SQLITE_ROW else { throw error(rc, action: action) }
        return statement.int64(column: 0)
    }

    func storedKeys(with statements: Statements) throws(DefaultsError) -> [String] {
        try rows(of: statements.keys, action: "Listing the keys") { statement throws(DefaultsError) in
            try storedKey(in: statement)
        }
    }

    func read(_ key: String, with statements: Statements) throws(DefaultsError) -> DefaultsValue? {
        let select = statements.select
        let result: Result<DefaultsValue?, DefaultsError> = select.withBound(text: key, to: 1) { rc in
            guard rc == SQLITE_OK else { return .failure(error(rc, action: "Reading the value", key: key)) }
            switch select.step() {
            case SQLITE_ROW:
                return Result { () throws(DefaultsError) in try storedValue(in: select, type: 0, value: 1, key: key) }
            case SQLITE_DONE:
                return .success(nil)
            case let rc:
                return .failure(error(rc, action: "Reading the value", key: key))
            }
        }
        return try result.get()
    }

    /// The value a write would replace; a damaged one counts as absent, so that it can be
    /// overwritten (and the write reported) whether or not anyone observes.
    func previousValue(_ key: String, with statements: Statements) throws(DefaultsError) -> DefaultsValue? {
        do throws(DefaultsError) {
            return try read(key, with: statements)
        } catch where error.code == .corrupted {
            return nil
        }
    }

    func rows<Row>(
        of statement: SQLiteStatement, action: String, _ row: (SQLiteStatement) throws(DefaultsError) -> Row
    ) throws(DefaultsError) -> [Row] {
        defer { statement.reset() }
        var result: [Row] = []
        while true {
            switch statement.step() {
            case SQLITE_ROW: result.append(try row(statement))
            case SQLITE_DONE: return result
            case let rc: throw error(rc, action: action)
            }
        }
    }

    func storedKey(in statement: SQLiteStatement) throws(DefaultsError) -> String {
        guard statement.type(column: 0) == SQLITE_TEXT,
            let key = String(validating: statement.textBytes(column: 0).assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        else {
            throw DefaultsError(
                .corrupted, "A key in the store is not valid UTF-8 text.", backend: SQLiteProvider.backend, path: path)
        }
        return key
    }

    func storedValue(
        in statement: SQLiteStatement, type: Int32, value: Int32, key: String
    ) throws(DefaultsError) -> DefaultsValue {
        do {
            return try SQLiteRowFormat.read(type: type, value: value, of: statement)
        } catch {
            throw DefaultsError(
                .corrupted, "The value stored under this key is damaged: \(error.reason).",
                backend: SQLiteProvider.backend, key: key, path: path, cause: error)
        }
    }
}
