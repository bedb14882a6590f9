import AnyDefaultsCore
import CSQLite
import Foundation

/// How one ``DefaultsValue`` sits in the `type` and `value` columns of the `defaults` table.
///
/// Scalars use SQLite's own storage classes, so the `sqlite3` shell shows them as they are:
/// bool and int as INTEGER, string as TEXT, data as BLOB, double and date as REAL. SQLite keeps a
/// REAL's 8 bytes exactly (`-0.0` and the infinities included) but turns a NaN into NULL, so a NaN
/// is stored as NULL under type `double` or `date`. Arrays and dictionaries are a BLOB in the
/// format of ``SQLiteContainerCodec``.
enum SQLiteRowFormat {
    /// The names in the `type` column. They are part of the file format (schema version 1), so
    /// they are spelled out here rather than taken from `DefaultsValue.typeName`, which is free to
    /// change.
    enum ValueType: Int, CaseIterable {
        case bool, int, double, string, data, date, array, dictionary

        /// The names, in the order of the cases.
        private static let names: [StaticString] = ["bool", "int", "double", "string", "data", "date", "array", "dictionary"]

        var name: StaticString { Self.names[rawValue] }

        init(of value: DefaultsValue) {
            switch value {
            case .bool: self = .bool
            case .int: self = .int
            case .double: self = .double
            case .string: self = .string
            case .data: self = .data
            case .date: self = .date
            case .array: self = .array
            case .dictionary: self = .dictionary
            }
        }

        /// The type whose name is `stored`, if any.
        init?(stored: UnsafeRawBufferPointer) {
            for type in Self.allCases {
                let name = type.name
                if name.utf8CodeUnitCount == stored.count,
                    let base = stored.baseAddress, memcmp(base, name.utf8Start, stored.count) == 0
                {
                    self = type
                    return
                }
            }
            return nil
        }
    }

    /// Binds `value` to the parameters `typeIndex` and `valueIndex` of `statement`; returns
    /// SQLite's result code.
    static func bind(
        _ value: DefaultsValue, type typeIndex: Int32, value valueIndex: Int32, in statement: SQLiteStatement
    ) -> Int32 {
        let rc = statement.bind(static: ValueType(of: value).name, to: typeIndex)
        guard rc == SQLITE_OK else { return rc }
        switch value {
        case .bool(let flag):
            return sqlite3_bind_int64(statement.handle, valueIndex, flag ? 1 : 0)
        case .int(let number):
            return sqlite3_bind_int64(statement.handle, valueIndex, number)
        case .double(let number):
            return bindReal(number, to: valueIndex, in: statement)
        case .date(let date):
            return bindReal(date.timeIntervalSinceReferenceDate, to: valueIndex, in: statement)
        case .string(var text):
            return text.withUTF8 { statement.bind(copyOfText: $0, to: valueIndex) }
        case .data(let data):
            return data.withUnsafeBytes { statement.bind(copyOfBlob: $0, to: valueIndex) }
        case .array, .dictionary:
            return SQLiteContainerCodec.encode(value).withUnsafeBytes { statement.bind(copyOfBlob: $0, to: valueIndex) }
        }
    }

    private static func bindReal(_ number: Double, to index: Int32, in statement: SQLiteStatement) -> Int32 {
        number.isNaN ? sqlite3_bind_null(statement.handle, index) : sqlite3_bind_double(statement.handle, index, number)
    }

    /// The value in the columns `typeColumn` and `valueColumn` of the current row.
    static func read(
        type typeColumn: Int32, value valueColumn: Int32, of statement: SQLiteStatement
    ) throws(SQLiteContainerCodec.Damage) -> DefaultsValue {
        guard statement.type(column: typeColumn) == SQLITE_TEXT,
            let type = ValueType(stored: statement.textBytes(column: typeColumn))
        else { throw SQLiteContainerCodec.Damage(reason: "the type column holds no known type name") }
        let storage = statement.type(column: valueColumn)
        switch (type, storage) {
        case (.int, SQLITE_INTEGER):
            return .int(statement.int64(column: valueColumn))
        case (.bool, SQLITE_INTEGER):
            switch statement.int64(column: valueColumn) {
            case 0: return .bool(false)
            case 1: return .bool(true)
            default: throw SQLiteContainerCodec.Damage(reason: "a bool is neither 0 nor 1")
            }
        case (.double, SQLITE_FLOAT), (.double, SQLITE_NULL):
            return .double(real(column: valueColumn, storage: storage, of: statement))
        case (.date, SQLITE_FLOAT), (.date, SQLITE_NULL):
            return .date(Date(timeIntervalSinceReferenceDate: real(column: valueColumn, storage: storage, of: statement)))
        case (.string, SQLITE_TEXT):
            let bytes = statement.textBytes(column: valueColumn)
            guard let text = String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
                throw SQLiteContainerCodec.Damage(reason: "a string is not valid UTF-8")
            }
            return .string(text)
        case (.data, SQLITE_BLOB):
            return .data(Data(statement.blobBytes(column: valueColumn)))
        case (.array, SQLITE_BLOB), (.dictionary, SQLITE_BLOB):
            let value = try SQLiteContainerCodec.decode(statement.blobBytes(column: valueColumn))
            guard ValueType(of: value) == type else {
                throw SQLiteContainerCodec.Damage(reason: "the encoded value does not match the type column")
            }
            return value
        default:
            throw SQLiteContainerCodec.Damage(reason: "the value column holds the wrong kind of SQLite value for its type")
        }
    }

    private static func real(column: Int32, storage: Int32, of statement: SQLiteStatement) -> Double {
        storage == SQLITE_NULL ? .nan : statement.double(column: column)
    }
}
