import AnyDefaultsCore
import Benchmark
import BenchmarkData
import Foundation
import Synchronization

// Declared in the module that reads them, as an application declares its keys: a key declared
// in another module is reached through a lazy-initialisation check on every read.
extension DefaultsKeys {
    static let benchCount = DefaultsKey<Int>("count", default: 0)
    static let benchName = DefaultsKey<String>("name", default: "")
    static let benchLayout = DefaultsKey<SampleLayout>(
        "layout", default: SampleLayout(columns: 0, sidebar: false, title: "", widths: []))
}

/// The reads an application makes once a value is cached, over any backend, side by side with
/// what they are built on: a bare `Mutex<[String: DefaultsValue]>` lookup (the floor), the
/// cached read of ``CachingProvider``, and typed reads through ``Defaults`` (which uses that
/// same cache). The backend matters only for filling the cache; the names start with `prefix`.
///
/// The benchmarks registered, each for Int, String and a Codable struct where it applies:
/// `Baseline: bare Mutex<[String: DefaultsValue]> read Int`, `Baseline: raw cached read Int`,
/// `Defaults typed read Int`, `Defaults integer(forKey:)`, `Baseline: raw cached read String`,
/// `Defaults typed read String`, `Baseline: raw cached read and decode Codable` and
/// `Defaults typed read Codable`; and the comparisons of the goals timed in pairs (see
/// ``Paired``): `Paired: raw cached read Int vs bare Mutex read Int`, `Paired: Defaults typed
/// read Int vs raw cached read Int`, `Paired: Defaults integer(forKey:) vs raw cached read Int`,
/// `Paired: Defaults typed read String vs raw cached read String` and `Paired: Defaults typed
/// read Codable vs raw cached read and decode Codable`.
public enum CachedReadBenchmarks {
    /// The store the reads use: a cache over the backend, and the facade over that cache.
    public final class Store<Upstream: DefaultsProvider>: Sendable {
        public let cache: CachingProvider<Upstream>
        public let defaults: Defaults
        public let bare: Mutex<[String: DefaultsValue]>

        init(cache: CachingProvider<Upstream>, defaults: Defaults, bare: [String: DefaultsValue]) {
            self.cache = cache
            self.defaults = defaults
            self.bare = Mutex(bare)
        }
    }

    /// Registers the benchmarks over the provider `open` makes in an empty temporary directory
    /// (named after `name`, removed afterwards); `cleanup` removes what it made elsewhere.
    public static func register<Upstream: DefaultsProvider>(
        prefix: String, name: String, open: @escaping @Sendable (URL) throws -> Upstream,
        cleanup: (@Sendable () -> Void)? = nil
    ) {
        let fixture = Fixture<Store<Upstream>>(name) { directory in
            let upstream = try open(directory)
            try upstream.apply(facadeSeed().map { .set($0.key, $0.value) })
            let cache = upstream.cached()
            for key in facadeSeed().keys { _ = try cache.value(forKey: key) }
            let defaults = Defaults(cache)  // uses that cache, does not wrap it again
            _ = defaults[.benchLayout]  // decoded once, before the reads
            return Store(cache: cache, defaults: defaults, bare: facadeSeed())
        }
        let configuration = Benchmark.Configuration(metrics: standardMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))
        let setUp: Benchmark.BenchmarkSetupHook = { try fixture.setUp() }
        let tearDown: Benchmark.BenchmarkTeardownHook = {
            fixture.tearDown()
            cleanup?()
        }
        func benchmark(_ title: String, _ body: @escaping @Sendable (Benchmark, Store<Upstream>) throws -> Void) {
            Benchmark(
                prefix + title, configuration: configuration,
                closure: { benchmark in try body(benchmark, fixture.value()) }, setup: setUp, teardown: tearDown)
        }
        /// `count` reads through `read`, as a side of a paired benchmark.
        func reads(_ read: @escaping @Sendable (Store<Upstream>) throws -> some Any) -> @Sendable (Int) throws -> Void {
            { count in
                let store = try fixture.value()
                for _ in 0..<count { blackHole(try read(store)) }
            }
        }
        func paired(_ title: String, _ subject: @escaping @Sendable (Int) throws -> Void, _ baseline: @escaping @Sendable (Int) throws -> Void) {
            Paired.register(
                prefix + "Paired: " + title, repetitions: 1000, setup: setUp, teardown: tearDown, subject: subject, baseline: baseline)
        }
        let bareInt = reads { $0.bare.withLock { $0["count"] } }
        let cachedInt = reads { try $0.cache.value(forKey: "count") }
        let cachedString = reads { try $0.cache.value(forKey: "name") }
        let decodedCodable = reads { store in try store.cache.value(forKey: "layout").map { try SampleLayout(defaultsValue: $0) } }
        paired("raw cached read Int vs bare Mutex read Int", cachedInt, bareInt)
        paired("Defaults typed read Int vs raw cached read Int", reads { $0.defaults[.benchCount] }, cachedInt)
        paired("Defaults integer(forKey:) vs raw cached read Int", reads { $0.defaults.integer(forKey: "count") }, cachedInt)
        paired("Defaults typed read String vs raw cached read String", reads { $0.defaults[.benchName] }, cachedString)
        paired("Defaults typed read Codable vs raw cached read and decode Codable", reads { $0.defaults[.benchLayout] }, decodedCodable)

        benchmark("Baseline: bare Mutex<[String: DefaultsValue]> read Int") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(store.bare.withLock { $0["count"] }) }
        }
        benchmark("Baseline: raw cached read Int") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(try store.cache.value(forKey: "count")) }
        }
        benchmark("Defaults typed read Int") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(store.defaults[.benchCount]) }
        }
        benchmark("Defaults integer(forKey:)") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(store.defaults.integer(forKey: "count")) }
        }

        benchmark("Baseline: raw cached read String") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(try store.cache.value(forKey: "name")) }
        }
        benchmark("Defaults typed read String") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(store.defaults[.benchName]) }
        }

        benchmark("Baseline: raw cached read and decode Codable") { benchmark, store in
            for _ in benchmark.scaledIterations {
                if let stored = try store.cache.value(forKey: "layout") { blackHole(try SampleLayout(defaultsValue: stored)) }
            }
        }
        benchmark("Defaults typed read Codable") { benchmark, store in
            for _ in benchmark.scaledIterations { blackHole(store.defaults[.benchLayout]) }
        }
    }
}
