import AnyDefaultsCore
import CSQLite
import Foundation

/// Writing the store: batches in one transaction, compare-and-set and compare-and-remove, removing
/// everything, and the change log that tells other processes what changed.
extension SQLiteConnection {
    /// Applies canonical, validated `changes` in one transaction and returns the events of the
    /// keys whose value changed; with `reportingEvents` false it returns none.
    ///
    /// With a `logPosition` (this process watches the store and someone observes), the commits of
    /// other processes logged after that position are read first, inside the transaction, and
    /// returned as ``SQLiteCommitEvents/earlier``, with the position after them.
    func apply(
        _ changes: [DefaultsChange], reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> SQLiteCommitEvents {
        let statements = try open()
        return try transaction(with: statements, action: "Applying the changes", logPosition: logPosition) {
            () throws(DefaultsError) in
            try write(changes, reportingEvents: reportingEvents, with: statements)
        }
    }

    /// Writes `changes` inside a transaction and returns their events (if `reportingEvents`).
    func write(_ changes: [DefaultsChange], reportingEvents: Bool, with statements: Statements) throws(DefaultsError) -> [DefaultsChangeEvent] {
        let logging = try isWatched(with: statements)
        // Only the changes that really change a value are reported and logged: each write
        // then says whether it changed its row (no read of the old value).
        let comparing = reportingEvents || logging
        var events: [DefaultsChangeEvent] = []
        if reportingEvents { events.reserveCapacity(changes.count) }
        for change in changes {
            guard try write(change, comparing: comparing, with: statements), comparing else { continue }
            if logging { try log(change.key, with: statements) }
            if reportingEvents { events.append(DefaultsChangeEvent(key: change.key, newValue: change.value)) }
        }
        return events
    }

    /// Applies canonical, validated `changes` in one transaction if every key of `expected`
    /// (canonical) holds exactly its value (`nil`: no row), else nothing; `reportingEvents` and
    /// `logPosition` as in ``apply(_:reportingEvents:logPosition:)``. A damaged value counts as
    /// changed.
    func apply(
        _ changes: [DefaultsChange], ifUnchanged expected: [(key: String, value: DefaultsValue?)], reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> (applied: Bool, events: SQLiteCommitEvents) {
        let statements = try open()
        var applied = false
        let events = try transaction(with: statements, action: "Applying the changes", logPosition: logPosition) {
            () throws(DefaultsError) in
            applied = false
            for (key, value) in expected {
                let stored: DefaultsValue?
                do throws(DefaultsError) {
                    stored = try read(key, with: statements)
                } catch where error.code == .corrupted {
                    return []
                }
                guard stored == value else { return [] }
            }
            applied = true
            return try write(changes, reportingEvents: reportingEvents, with: statements)
        }
        return (applied, events)
    }

    /// Removes each key of `expected` (canonical) that holds exactly its value, in one transaction,
    /// so that no other connection's write comes between the comparison and the removal. Returns
    /// the keys removed and the events (those only if `reportingEvents`); `logPosition` as in
    /// ``apply(_:reportingEvents:logPosition:)``. A damaged value counts as changed.
    func removeUnchanged(
        _ expected: [(key: String, value: DefaultsValue)], reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> (removed: [String], events: SQLiteCommitEvents) {
        let statements = try open()
        var removed: [String] = []
        let events = try transaction(with: statements, action: "Removing unchanged values", logPosition: logPosition) {
            () throws(DefaultsError) in
            removed = []
            let logging = try isWatched(with: statements)
            for (key, value) in expected where try previousValue(key, with: statements) == value {
                guard try write(.remove(key), comparing: true, with: statements) else { continue }
                removed.append(key)
                if logging { try log(key, with: statements) }
            }
            return reportingEvents ? removed.map { DefaultsChangeEvent(key: $0, newValue: nil) } : []
        }
        return (removed, events)
    }

    /// Removes the canonical `key` in one transaction and returns whether it held a value, with
    /// the event of its removal if `reportingEvents`; `logPosition` as in
    /// ``apply(_:reportingEvents:logPosition:)``.
    func remove(
        _ key: String, reportingEvents: Bool, logPosition: Int64?
    ) throws(DefaultsError) -> (existed: Bool, events: SQLiteCommitEvents) {
        let statements = try open()
        var existed = false
        let events = try transaction(with: statements, action: "Removing the value", logPosition: logPosition) {
            () throws(DefaultsError) in
            existed = try write(.remove(key), comparing: true, with: statements)
            guard existed else { return [] }
            if try isWatched(with: statements) { try log(key, with: statements) }
            return reportingEvents ? [DefaultsChangeEvent(key: key, newValue: nil)] : []
        }
        return (existed, events)
    }

    /// Removes every key and returns the events of the removed keys if `reportingEvents`;
    /// `logPosition` as in ``apply(_:reportingEvents:logPosition:)``.
    func removeAll(reportingEvents: Bool, logPosition: Int64?) throws(DefaultsError) -> SQLiteCommitEvents {
        let statements = try open()
        let action = "Removing all values"
        return try transaction(with: statements, action: action, logPosition: logPosition) {
            () throws(DefaultsError) in
            let keys = reportingEvents ? try storedKeys(with: statements) : []
            if try isWatched(with: statements) {
                try check(statements.logAll.bind(origin, to: 1), action: action)
                try check(statements.logAll.run(), action: action)
                let count = sqlite3_changes64(db)
                if count > 0 {
                    logged = true
                    let last = sqlite3_last_insert_rowid(db)
                    // Prune as if each row had been logged alone: if a multiple of the interval was passed.
                    if last / ChangeLog.pruneInterval != (last - count) / ChangeLog.pruneInterval {
                        try prune(after: last, with: statements)
                    }
                }
            }
            try check(statements.deleteAll.run(), action: action)
            return keys.map { DefaultsChangeEvent(key: $0, newValue: nil) }
        }
    }

    /// Runs the write transaction `body` (which returns this commit's events), reading the other
    /// processes' commits logged after `logPosition` first.
    func transaction(
        with statements: Statements, action: String, logPosition: Int64?,
        _ body: () throws(DefaultsError) -> [DefaultsChangeEvent]
    ) throws(DefaultsError) -> SQLiteCommitEvents {
        try ringingDoorbellIfLogged { () throws(DefaultsError) in
            try transaction(with: statements, action: action) { () throws(DefaultsError) in
                guard let logPosition else { return SQLiteCommitEvents(own: try body()) }
                let version = try integer(from: statements.dataVersion, action: action)
                guard version != logCheckedAtDataVersion else { return SQLiteCommitEvents(own: try body()) }
                let earlier = try logEvents(after: logPosition, complete: true, with: statements)
                logCheckedAtDataVersion = version
                return SQLiteCommitEvents(earlier: earlier, own: try body())
            }
        }
    }

    /// Runs `write`, which commits, and if it logged a change (another process watches the
    /// store), wakes the watchers (`ChangeLog.ringDoorbell`).
    func ringingDoorbellIfLogged<T>(_ write: () throws(DefaultsError) -> T) throws(DefaultsError) -> T {
        logged = false
        let result = try write()
        if logged { ChangeLog.ringDoorbell(path: path) }
        return result
    }

    /// Whether a process other than this one holds a lease on the change log, so that this write
    /// transaction must log what it changes. Asked inside the transaction.
    func isWatched(with statements: Statements) throws(DefaultsError) -> Bool {
        try check(statements.watched.bind(origin, to: 1), action: "Reading the change log's leases")
        return try integer(from: statements.watched, action: "Reading the change log's leases") != 0
    }

    /// Logs a change of `key` made by this process, and prunes the log every
    /// ``ChangeLog/pruneInterval`` rows.
    func log(_ key: String, with statements: Statements) throws(DefaultsError) {
        let action = "Logging the change"
        let rc = statements.log.withBound(text: key, to: 1) { rc in
            guard rc == SQLITE_OK else { return rc }
            let bound = statements.log.bind(origin, to: 2)
            return bound == SQLITE_OK ? statements.log.step() : bound
        }
        guard rc == SQLITE_DONE else { throw error(rc, action: action, key: key) }
        logged = true
        let sequence = sqlite3_last_insert_rowid(db)
        if sequence % ChangeLog.pruneInterval == 0 { try prune(after: sequence, with: statements) }
    }

    /// Prunes the change log as of its row `sequence` (``SQLiteChangeLog/pruneSQL``).
    func prune(after sequence: Int64, with statements: Statements) throws(DefaultsError) {
        try check(statements.prune.bind(sequence, to: 1), action: "Pruning the change log")
        try check(statements.prune.run(), action: "Pruning the change log")
    }

    /// Writes one change; returns whether a row was written or removed. With `comparing`, a row
    /// that already holds an equal value is left alone, and the write returns `false`.
    func write(_ change: DefaultsChange, comparing: Bool, with statements: Statements) throws(DefaultsError) -> Bool {
        let (statement, action) =
            switch change.value {
            case nil: (statements.delete, "Removing the value")
            case let value? where comparing:
                (
                    SQLiteValueComparison.needsFunction(value) ? statements.upsertIfDiffers : statements.upsertIfChanged,
                    "Writing the value"
                )
            case _?: (statements.upsert, "Writing the value")
            }
        let rc = statement.withBound(text: change.key, to: 1) { rc in
            guard rc == SQLITE_OK else { return rc }
            if let value = change.value {
                let rc = SQLiteRowFormat.bind(value, type: 2, value: 3, in: statement)
                guard rc == SQLITE_OK else { return rc }
            }
            return statement.step()
        }
        guard rc == SQLITE_DONE else { throw error(rc, action: action, key: change.key) }
        return sqlite3_changes64(db) > 0
    }
}
