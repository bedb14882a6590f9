import Benchmark
import BenchmarkData
import Foundation

/// A store of many keys (``ScaleKeys``) that the scale benchmark reads, through its provider and
/// with the C API (on the same file, or on a store of the same keys).
public protocol ScaleStore: Sendable {
    /// Keys to read, drawn at random from the whole store.
    var sample: [String] { get }
    /// Reads `key` through the provider.
    func read(_ key: String) throws
    /// Reads `key` with the C API.
    func readRaw(_ key: String)
}

/// Point reads of random keys in stores of 1k, 100k and 1M keys, read in turn so that the
/// ratios between them are timed in pairs (see ``Paired``).
public enum ScaleBenchmark {
    /// The stores, built by `make(directory, count)`, each in a directory of its own.
    final class Stores<Store: ScaleStore>: Sendable {
        let small: Store
        let medium: Store
        let large: Store

        init(directory: URL, make: (URL, Int) throws -> Store) throws {
            func store(_ count: Int) throws -> Store {
                let subdirectory = directory.appendingPathComponent("\(count)")
                try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: true)
                return try make(subdirectory, count)
            }
            small = try store(1_000)
            medium = try store(100_000)
            large = try store(1_000_000)
        }
    }

    /// Registers `Scale: point reads of random keys in 1k, 100k and 1M keys, interleaved`,
    /// recording the ratios `provider 1M/1k`, `provider 100k/1k`, `raw C 1M/1k`,
    /// `provider/raw C at 1M` and `provider/raw C at 1k` (×1000). The stores are built in the
    /// benchmark's setup, so once per run, and removed afterwards.
    public static func register<Store: ScaleStore>(_ name: String, make: @escaping @Sendable (URL, Int) throws -> Store) {
        let stores = Fixture(name) { directory in try Stores(directory: directory, make: make) }
        func reads(_ store: @escaping @Sendable (Stores<Store>) -> Store, raw: Bool = false) -> (Int) throws -> Void {
            let cursor = Turns()
            return { count in
                let store = store(try stores.value())
                let sample = store.sample
                for _ in 0..<count {
                    let key = sample[cursor.next() % sample.count]
                    if raw { store.readRaw(key) } else { try store.read(key) }
                }
            }
        }
        Paired.registerInterleaved(
            "Scale: point reads of random keys in 1k, 100k and 1M keys, interleaved", repetitions: 1000,
            maxDuration: .seconds(4), setup: { try stores.setUp() }, teardown: { stores.tearDown() },
            operations: [reads(\.small), reads(\.medium), reads(\.large), reads(\.small, raw: true), reads(\.large, raw: true)],
            ratios: [
                .init(metric: Paired.custom("provider 1M/1k ×1000"), subject: 2, baseline: 0),
                .init(metric: Paired.custom("provider 100k/1k ×1000"), subject: 1, baseline: 0),
                .init(metric: Paired.custom("raw C 1M/1k ×1000"), subject: 4, baseline: 3),
                .init(metric: Paired.custom("provider/raw C at 1M ×1000"), subject: 2, baseline: 4),
                .init(metric: Paired.custom("provider/raw C at 1k ×1000"), subject: 0, baseline: 3),
            ])
    }
}
