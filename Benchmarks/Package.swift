// swift-tools-version: 6.1
import PackageDescription

// A separate package, so that users of AnyDefaults never resolve the benchmark tooling.
// Run: ../scripts/benchmarks [TARGET-REGEX]  (the ratio table), or
//      swift package --allow-writing-to-package-directory benchmark --target NAME

/// A package-benchmark target at Benchmarks/NAME, with the shared support and the given
/// AnyDefaults products (the raw baseline of each comparison lives in the same target).
func benchmark(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["BenchmarkSupport", "BenchmarkData", .product(name: "Benchmark", package: "package-benchmark")]
            + products.map { .product(name: $0, package: "AnyDefaults") },
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
}

let package = Package(
    name: "AnyDefaultsBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AnyDefaults", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        // The raw baseline of PostgreSQLBenchmarks (the same version AnyDefaults resolves).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // In memory, the cache, Foundation UserDefaults.string(forKey:) and a bare Mutex (issue 7).
        benchmark("CoreBenchmarks", ["AnyDefaultsCore", "AnyDefaultsMemory"]),
        // Typed reads through Defaults against the raw cached read (issue 8).
        benchmark("FacadeBenchmarks", ["AnyDefaultsCore", "AnyDefaultsMemory"]),
        // Tracked reads and observed writes against the raw cached provider (issue 10).
        benchmark("ObservationBenchmarks", ["AnyDefaultsCore", "AnyDefaultsMemory"]),
        // @ObservableDefaults properties against the same key through Defaults (issue 19).
        benchmark("MacroBenchmarks", ["AnyDefaultsMacros"]),
        // Each backend beside what it is built on (issues 3 to 6): a bare atomic file write,
        // Foundation UserDefaults, raw libsqlite3 and liblmdb calls (in BenchmarkData).
        benchmark("JSONFileBenchmarks", ["AnyDefaultsCore", "AnyDefaultsJSONFile"]),
        benchmark("UserDefaultsBenchmarks", ["AnyDefaultsCore", "AnyDefaultsUserDefaults"]),
        benchmark("SQLiteBenchmarks", ["AnyDefaultsCore", "AnyDefaultsSQLite"]),
        benchmark("LMDBBenchmarks", ["AnyDefaultsCore", "AnyDefaultsLMDB"]),
        // Beside raw postgres-nio on a throwaway server (issue 21); run by scripts/postgres-benchmarks.
        .executableTarget(
            name: "PostgreSQLBenchmarks",
            dependencies: [
                "BenchmarkSupport", .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ] + ["AnyDefaultsCore", "AnyDefaultsMemory", "AnyDefaultsPostgreSQL"].map { .product(name: $0, package: "AnyDefaults") },
            path: "Benchmarks/PostgreSQLBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),

        // What the benchmark targets share: fixtures in temporary directories, paired timing,
        // memory measurement, the scale benchmark, the cached and facade reads over any backend.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "BenchmarkData",
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            ],
            path: "Support/BenchmarkSupport"
        ),
        // What the benchmarks and the probe share, without the benchmark tooling: the raw C
        // baselines (libsqlite3 and liblmdb driven directly, as a C program would), the keys of
        // the scale stores, and the values the facade benchmarks read.
        .target(
            name: "BenchmarkData",
            dependencies: [
                .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
                .product(name: "AnyDefaultsSQLite", package: "AnyDefaults"),
                .product(name: "AnyDefaultsLMDB", package: "AnyDefaults"),
            ],
            path: "Support/BenchmarkData"
        ),
        // Runs one operation in a loop, for profiling under callgrind (Docs/Performance.md).
        .executableTarget(
            name: "BenchmarkProbe",
            dependencies: ["BenchmarkData"]
                + ["AnyDefaultsCore", "AnyDefaultsMemory", "AnyDefaultsJSONFile", "AnyDefaultsSQLite", "AnyDefaultsLMDB"]
                    .map { .product(name: $0, package: "AnyDefaults") },
            path: "Support/BenchmarkProbe"
        ),
        // Commit on one PostgreSQL client to the event on another (issue 21): p50/p99, lost changes.
        .executableTarget(
            name: "PostgreSQLLatency",
            dependencies: ["AnyDefaultsCore", "AnyDefaultsPostgreSQL"].map { .product(name: $0, package: "AnyDefaults") },
            path: "Benchmarks/PostgreSQLLatency"
        ),
        // Changes from other processes (issue 11): delivery latency and idle cost; a program of
        // its own, not a package-benchmark target. Run: scripts/change-latency
        .executableTarget(
            name: "ChangeLatency",
            dependencies: [.product(name: "AnyDefaults", package: "AnyDefaults")],
            path: "Benchmarks/ChangeLatency"
        ),
    ],
    swiftLanguageModes: [.v6]
)
