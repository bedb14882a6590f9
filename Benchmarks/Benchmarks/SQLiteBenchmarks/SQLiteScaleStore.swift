import AnyDefaultsCore
import AnyDefaultsSQLite
import BenchmarkSupport
import Foundation

/// A store of `count` keys (``ScaleKeys``), written by SQLiteProvider in one transaction,
/// closed (which checkpoints the log into the file) and reopened.
final class SQLiteScaleStore: Sendable {
    let path: String
    let provider: SQLiteProvider
    /// A raw connection on the same file.
    let raw: RawSQLite
    /// Keys to read, drawn at random from the whole store.
    let sample: [String]

    init(directory: URL, count: Int, mixed: Bool = false) throws {
        path = directory.appendingPathComponent("scale.sqlite").path
        let building = try SQLiteProvider(path: path)
        try building.apply(mixed ? ScaleKeys.mixedChanges(count: count) : ScaleKeys.changes(count: count))
        building.close()
        provider = try SQLiteProvider(path: path)
        raw = try RawSQLite(path: path, full: false)
        sample = ScaleKeys.sample(of: count)
    }
}

/// The stores of 1k, 100k and 1M keys the scale benchmark reads, each in a directory of its own.
final class SQLiteScaleStores: Sendable {
    let small: SQLiteScaleStore
    let medium: SQLiteScaleStore
    let large: SQLiteScaleStore

    init(directory: URL) throws {
        func store(_ count: Int) throws -> SQLiteScaleStore {
            let subdirectory = directory.appendingPathComponent("\(count)")
            try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: true)
            return try SQLiteScaleStore(directory: subdirectory, count: count)
        }
        small = try store(1_000)
        medium = try store(100_000)
        large = try store(1_000_000)
    }
}
