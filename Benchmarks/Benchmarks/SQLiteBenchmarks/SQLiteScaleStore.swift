import AnyDefaultsCore
import AnyDefaultsSQLite
import Benchmark
import BenchmarkData
import BenchmarkSupport
import Foundation

/// A store of `count` keys (``ScaleKeys``), written by SQLiteProvider in one transaction,
/// closed (which checkpoints the log into the file) and reopened.
final class SQLiteScaleStore: ScaleStore {
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

    func read(_ key: String) throws {
        blackHole(try provider.value(forKey: key))
    }

    func readRaw(_ key: String) {
        blackHole(raw.read(key: key))
    }
}

