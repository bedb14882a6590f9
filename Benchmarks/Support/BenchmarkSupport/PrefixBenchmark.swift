import AnyDefaultsCore
import Benchmark
import BenchmarkData
import Foundation

/// Listing one tenant's keys (10 keys under `tenant/acme/`) in a store of 1k keys and in one of
/// 1M keys (``ScaleKeys`` plus the tenant's, and its neighbours `tenant/acme-corp/` and
/// `tenant/acmf/`), read in turn so that the ratio is timed in pairs (see ``Paired``): a prefix
/// query served by the backend's index costs the same in both; a scan of the whole store costs a
/// thousand times more in the larger one.
public enum PrefixBenchmark {
    /// The tenant whose keys are listed.
    public static let prefix = "tenant/acme/"

    /// The changes that add the tenant's 10 keys and 20 neighbours (sharing part of the prefix).
    public static let tenantChanges: [DefaultsChange] = (0..<10).flatMap { index -> [DefaultsChange] in
        [
            .set(prefix + "setting\(index)", .int(Int64(index))),
            .set("tenant/acme-corp/setting\(index)", .int(Int64(index))),
            .set("tenant/acmf/setting\(index)", .int(Int64(index))),
        ]
    }

    final class Stores: Sendable {
        let small: any DefaultsProvider
        let large: any DefaultsProvider

        init(directory: URL, make: (URL, Int) throws -> any DefaultsProvider) throws {
            func store(_ count: Int) throws -> any DefaultsProvider {
                let subdirectory = directory.appendingPathComponent("\(count)")
                try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: true)
                return try make(subdirectory, count)
            }
            small = try store(1_000)
            large = try store(1_000_000)
        }
    }

    /// Registers `Prefix: list 10 keys under a prefix in 1k and 1M keys, interleaved`, recording
    /// `keys 1M/1k ×1000` and `values 1M/1k ×1000` (keys(withPrefix:) and allValues(withPrefix:)).
    /// `make` builds a store of `count` ``ScaleKeys`` plus ``tenantChanges``.
    public static func register(_ name: String, make: @escaping @Sendable (URL, Int) throws -> any DefaultsProvider) {
        let stores = Fixture(name) { directory in try Stores(directory: directory, make: make) }
        func list(_ store: @escaping @Sendable (Stores) -> any DefaultsProvider, values: Bool) -> (Int) throws -> Void {
            { count in
                let provider = store(try stores.value())
                for _ in 0..<count {
                    if values {
                        let listed = try provider.allValues(withPrefix: prefix)
                        precondition(listed.count == 10, "the tenant has 10 keys")
                        blackHole(listed)
                    } else {
                        let listed = try provider.keys(withPrefix: prefix)
                        precondition(listed.count == 10, "the tenant has 10 keys")
                        blackHole(listed)
                    }
                }
            }
        }
        Paired.registerInterleaved(
            "Prefix: list 10 keys under a prefix in 1k and 1M keys, interleaved", repetitions: 200,
            maxDuration: .seconds(4), setup: { try stores.setUp() }, teardown: { stores.tearDown() },
            operations: [list(\.small, values: false), list(\.large, values: false), list(\.small, values: true), list(\.large, values: true)],
            ratios: [
                .init(metric: Paired.custom("keys 1M/1k ×1000"), subject: 1, baseline: 0),
                .init(metric: Paired.custom("values 1M/1k ×1000"), subject: 3, baseline: 2),
            ])
    }
}
