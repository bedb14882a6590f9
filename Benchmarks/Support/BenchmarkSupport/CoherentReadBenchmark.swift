import AnyDefaultsCore
import Benchmark
import Foundation
import Synchronization

/// What the cross-process coherence check costs a cached read: a cache over a provider that
/// offers a ``SharedChangeCounter`` (one atomic load per read, compared with the count this
/// process accounted for), the same cache with the counter hidden (the cached read as it was
/// before the counter), and a bare `Mutex<[String: DefaultsValue]>` lookup (the floor), read in
/// turn so that their ratios are timed in pairs (see ``Paired``).
public enum CoherentReadBenchmark {
    final class Stores<Upstream: DefaultsProvider>: Sendable {
        let coherent: CachingProvider<Upstream>
        let uncounted: CachingProvider<HidingCounter<Upstream>>
        let bare: Mutex<[String: DefaultsValue]>

        init(_ upstream: Upstream) throws {
            try upstream.setValue(.int(42), forKey: "count")
            coherent = upstream.cached()
            uncounted = HidingCounter(upstream: upstream).cached()
            bare = Mutex(["count": .int(42)])
            // Filled, and the counter caught up, before the reads.
            _ = try coherent.value(forKey: "count")
            _ = try uncounted.value(forKey: "count")
        }
    }

    /// Registers `Coherent cached read: counter vs without vs bare Mutex, interleaved`, recording
    /// `with counter/without ×1000`, `with counter/bare Mutex ×1000` and
    /// `without counter/bare Mutex ×1000`, over the provider `open` makes in a temporary directory.
    public static func register<Upstream: DefaultsProvider>(_ name: String, open: @escaping @Sendable (URL) throws -> Upstream) {
        let stores = Fixture(name) { directory in try Stores(try open(directory)) }
        func reads(_ read: @escaping @Sendable (Stores<Upstream>) throws -> DefaultsValue?) -> (Int) throws -> Void {
            { count in
                let stores = try stores.value()
                for _ in 0..<count { blackHole(try read(stores)) }
            }
        }
        Paired.registerInterleaved(
            "Coherent cached read: counter vs without vs bare Mutex, interleaved", repetitions: 1000,
            setup: { try stores.setUp() }, teardown: { stores.tearDown() },
            operations: [
                reads { try $0.coherent.value(forKey: "count") },
                reads { try $0.uncounted.value(forKey: "count") },
                reads { stores in stores.bare.withLock { $0["count"] } },
            ],
            ratios: [
                .init(metric: Paired.custom("with counter/without ×1000"), subject: 0, baseline: 1),
                .init(metric: Paired.custom("with counter/bare Mutex ×1000"), subject: 0, baseline: 2),
                .init(metric: Paired.custom("without counter/bare Mutex ×1000"), subject: 1, baseline: 2),
            ])
    }
}

/// A provider that forwards everything to `upstream` but offers no shared change counter: a cache
/// in front of it reads as caches did before the counter existed.
struct HidingCounter<Upstream: DefaultsProvider>: DefaultsProvider {
    let upstream: Upstream
    var capabilities: DefaultsCapabilities { upstream.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try upstream.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try upstream.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try upstream.apply(changes) }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        upstream.observe(handler)
    }
}
