import AnyDefaultsCore
import CSQLite

import AnyDefaultsPlatform

/// Writing a value only if it differs from the stored one, in one statement: the upsert's
/// `DO UPDATE … WHERE` compares, and `sqlite3_changes` then says whether the row changed.
///
/// SQL comparison agrees with ``DefaultsValue``'s equality for ints, bools, data, strings (both
/// compare bytes: `"caf\u{E9}"` and `"cafe\u{301}"` are different values) and non-zero reals
/// (``upsertIfChangedSQL``), but not for arrays and dictionaries (equal values may encode their
/// entries differently) and a real zero (SQL finds `0.0` and `-0.0` equal; they are different
/// values). Those are written with ``upsertIfDiffersSQL``, which asks the function
/// `anydefaults_differ(type, old, new)`, registered on the connection, to compare as
/// ``DefaultsValue`` does. A stored value of the wrong SQLite kind for its type (a damaged row)
/// always differs, so it is overwritten, as a damaged value is whether or not anyone observes.
enum SQLiteValueComparison {
    /// The name of the SQL function.
    static let function = "anydefaults_differ"

    /// `?1` key, `?2` type name, `?3` value: inserts, or updates whatever is stored.
    static let upsertSQL = """
        INSERT INTO \(SQLiteSchema.table) (key, type, value) VALUES (?1, ?2, ?3)
        ON CONFLICT (key) DO UPDATE SET type = excluded.type, value = excluded.value
        """

    /// `?1` key, `?2` type name, `?3` value: inserts, or updates a value whose bytes differ.
    static let upsertIfChangedSQL = """
        \(upsertSQL)
        WHERE type IS NOT excluded.type OR value IS NOT excluded.value OR typeof(value) IS NOT typeof(excluded.value)
        """

    /// As ``upsertIfChangedSQL``, comparing with `anydefaults_differ`.
    static let upsertIfDiffersSQL = "\(upsertSQL) WHERE type IS NOT excluded.type OR \(function)(type, value, excluded.value)"

    /// Whether `value` is written with ``upsertIfDiffersSQL`` rather than ``upsertIfChangedSQL``.
    static func needsFunction(_ value: DefaultsValue) -> Bool {
        switch value {
        case .bool, .int, .data, .string: false
        case .double(let number): number == 0
        case .date(let date): date.timeIntervalSinceReferenceDate == 0
        case .array, .dictionary: true
        }
    }

    /// Registers the function on `db`; returns SQLite's result code.
    static func register(on db: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            db, function, 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, nil, anyDefaultsDiffer, nil, nil, nil)
    }

    /// Whether the values `old` and `new` of the stored type `type` differ as ``DefaultsValue``s.
    /// Anything it cannot read (a damaged value) differs.
    static func differ(type: OpaquePointer, old: OpaquePointer, new: OpaquePointer) -> Bool {
        let kind = sqlite3_value_type(new)
        guard sqlite3_value_type(old) == kind,
            let typeName = bytes(type, kind: SQLITE_TEXT), let type = SQLiteRowFormat.ValueType(stored: typeName)
        else { return true }
        switch (type, kind) {
        case (.double, SQLITE_FLOAT), (.date, SQLITE_FLOAT):
            return sqlite3_value_double(old).bitPattern != sqlite3_value_double(new).bitPattern
        case (.double, SQLITE_NULL), (.date, SQLITE_NULL):
            return false  // NaN, which equals NaN
        case (.int, SQLITE_INTEGER), (.bool, SQLITE_INTEGER):
            return sqlite3_value_int64(old) != sqlite3_value_int64(new)
        case (.data, SQLITE_BLOB):
            return !same(old, new, kind: kind)
        case (.string, SQLITE_TEXT):
            // A string is its exact scalars: another spelling is another value.
            return !same(old, new, kind: kind)
        case (.array, SQLITE_BLOB), (.dictionary, SQLITE_BLOB):
            if same(old, new, kind: kind) { return false }
            guard let old = bytes(old, kind: kind), let new = bytes(new, kind: kind),
                let oldValue = try? SQLiteContainerCodec.decode(old), let newValue = try? SQLiteContainerCodec.decode(new)
            else { return true }
            return oldValue != newValue
        default:
            return true
        }
    }

    /// Whether the TEXT or BLOB values `a` and `b` (of SQLite kind `kind`) hold the same bytes.
    private static func same(_ a: OpaquePointer, _ b: OpaquePointer, kind: Int32) -> Bool {
        guard let a = bytes(a, kind: kind), let b = bytes(b, kind: kind), a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }  // both empty
        return memcmp(left, right, a.count) == 0
    }

    /// The bytes of `value` if it is of SQLite kind `kind` (TEXT or BLOB), valid during the call.
    private static func bytes(_ value: OpaquePointer, kind: Int32) -> UnsafeRawBufferPointer? {
        guard sqlite3_value_type(value) == kind else { return nil }
        // The pointer first, then the length, as SQLite asks.
        let start: UnsafeRawPointer? =
            kind == SQLITE_TEXT ? UnsafeRawPointer(sqlite3_value_text(value)) : sqlite3_value_blob(value)
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_value_bytes(value)))
    }
}

/// The C entry point of `anydefaults_differ`.
private func anyDefaultsDiffer(context: OpaquePointer?, count: Int32, arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard count == 3, let arguments, let type = arguments[0], let old = arguments[1], let new = arguments[2] else {
        sqlite3_result_int(context, 1)
        return
    }
    sqlite3_result_int(context, SQLiteValueComparison.differ(type: type, old: old, new: new) ? 1 : 0)
}
