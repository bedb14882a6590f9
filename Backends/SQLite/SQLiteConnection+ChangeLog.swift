import AnyDefaultsCore
import CSQLite

/// Reading the change log (``SQLiteChangeLog``) and holding a watcher's lease, on a connection.
extension SQLiteConnection {
    /// The position after the newest row of the change log.
    func logEnd() throws(DefaultsError) -> Int64 {
        try integer(from: open().logEnd, action: "Reading the change log")
    }

    /// What other processes changed after `position`, as `.external` events carrying the values
    /// stored now, read in one snapshot, with the position after them. With `complete` false (the
    /// lease had lapsed, so changes may have gone unlogged) every stored key is reported too.
    func logEvents(after position: Int64, complete: Bool) throws(DefaultsError) -> ChangeLog.Report {
        let statements = try open()
        return try transaction(with: statements, action: "Reading the change log", beginning: statements.beginRead) {
            () throws(DefaultsError) in
            try logEvents(after: position, complete: complete, with: statements)
        }
    }

    /// ``logEvents(after:complete:)`` inside a transaction that is already open.
    func logEvents(
        after position: Int64, complete: Bool, with statements: Statements
    ) throws(DefaultsError) -> ChangeLog.Report {
        let action = "Reading the change log"
        try check(statements.logRows.bind(position, to: 1), action: action)
        let rows = try rows(of: statements.logRows, action: action) { statement throws(DefaultsError) in
            ChangeLog.Entry(
                sequence: statement.int64(column: 0), key: String(decoding: statement.textBytes(column: 1), as: UTF8.self),
                origin: statement.int64(column: 2))
        }
        let reading = ChangeLog.read(rows, after: position, skipping: origin)
        let events = try reading.events(trusted: complete) { () throws(DefaultsError) in
            try storedKeys(with: statements)
        } value: { key throws(DefaultsError) in
            try previousValue(key, with: statements)
        }
        return ChangeLog.Report(events: events, end: reading.end, complete: reading.complete && complete)
    }

    /// Takes or renews this process's lease until `expires` (Unix seconds), in a write
    /// transaction, and returns the log's end as of that moment: every commit after it is logged
    /// while the lease lasts.
    func lease(until expires: Int64) throws(DefaultsError) -> Int64 {
        let action = "Taking a lease on the change log"
        let statements = try open()
        return try transaction(with: statements, action: action) { () throws(DefaultsError) in
            for sql in SQLiteChangeLog.leaseSQL {
                try run(sql, binding: [origin, expires], action: action)
            }
            return try logEnd()
        }
    }

    /// Gives this process's lease back, so that other processes stop logging for it.
    func releaseLease() throws(DefaultsError) {
        try run(SQLiteChangeLog.releaseSQL, binding: [origin], action: "Giving back the lease on the change log")
    }

    /// Runs `sql`, which returns no rows, with its parameters bound to `values` (as many as it has).
    private func run(_ sql: String, binding values: [Int64], action: String) throws(DefaultsError) {
        let statement = try prepare(sql, persistent: false, action: action)
        defer { sqlite3_finalize(statement.handle) }
        for index in 0..<min(values.count, Int(sqlite3_bind_parameter_count(statement.handle))) {
            try check(statement.bind(values[index], to: Int32(index + 1)), action: action)
        }
        try check(statement.run(), action: action)
    }
}
