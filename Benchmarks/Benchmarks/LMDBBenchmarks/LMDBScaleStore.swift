import AnyDefaultsCore
import AnyDefaultsLMDB
import Benchmark
import BenchmarkData
import BenchmarkSupport
import Foundation

/// A store of `count` keys (``ScaleKeys``) written by LMDBProvider in one transaction, and, with
/// `raw`, a store of the same keys (8-byte values) written with the C API in one transaction, in
/// a directory of its own (one environment per file per process).
final class LMDBScaleStore: ScaleStore {
    let path: String
    let provider: LMDBProvider
    let raw: RawLMDBStore?
    /// Keys to read, drawn at random from the whole store.
    let sample: [String]

    init(directory: URL, count: Int, raw: Bool) throws {
        path = directory.appendingPathComponent("provider-\(count)").path
        provider = try LMDBProvider(path: path)
        try provider.apply(ScaleKeys.changes(count: count))
        if raw {
            let store = try RawLMDBStore(path: directory.appendingPathComponent("raw-\(count)").path, noSync: false)
            store.write((0..<count).lazy.map { (ScaleKeys.name($0), Int64($0)) })
            self.raw = store
        } else {
            self.raw = nil
        }
        sample = ScaleKeys.sample(of: count)
    }

    deinit {
        provider.close()
    }

    func read(_ key: String) throws {
        blackHole(try provider.value(forKey: key))
    }

    func readRaw(_ key: String) {
        blackHole(raw?.read(key))
    }
}

