// swift-tools-version: 6.1
import PackageDescription

// A separate package, so that users of AnyDefaults never resolve the benchmark tooling.
// Run: cd Benchmarks && swift package benchmark   (or ../scripts/benchmarks for the ratio table)
let package = Package(
    name: "AnyDefaultsBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AnyDefaults", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
                .product(name: "AnyDefaultsMemory", package: "AnyDefaults"),
            ],
            path: "Benchmarks/CoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // What several benchmark targets share: fixtures in temporary directories, the keys of
        // the scale stores, memory measurement, and the cached and facade reads over any backend.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "BenchmarkData",
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            ],
            path: "Support/BenchmarkSupport"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: Facade benchmarks: typed reads through Defaults against the raw provider read.
package.targets += [
    .executableTarget(
        name: "FacadeBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "package-benchmark"),
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsMemory", package: "AnyDefaults"),
        ],
        path: "Benchmarks/FacadeBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    ),
]

// MARK: JSON file backend (issue 5)
package.targets.append(
    .executableTarget(
        name: "JSONFileBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "package-benchmark"),
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsJSONFile", package: "AnyDefaults"),
        ],
        path: "Benchmarks/JSONFileBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
)

// MARK: UserDefaults backend (issue 6)
package.targets.append(
    .executableTarget(
        name: "UserDefaultsBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "package-benchmark"),
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsUserDefaults", package: "AnyDefaults"),
        ],
        path: "Benchmarks/UserDefaultsBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
)

// MARK: SQLite backend (issue 3): SQLiteProvider beside raw libsqlite3 calls on the same table.
package.targets.append(
    .executableTarget(
        name: "SQLiteBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "package-benchmark"),
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsSQLite", package: "AnyDefaults"),
        ],
        path: "Benchmarks/SQLiteBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
)

// MARK: Observation (issue 10): tracked reads and observed writes against the raw cached provider.
package.targets.append(
    .executableTarget(
        name: "ObservationBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "package-benchmark"),
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsMemory", package: "AnyDefaults"),
        ],
        path: "Benchmarks/ObservationBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
)

// MARK: LMDB backend beside raw liblmdb (CLMDB comes with AnyDefaultsLMDB)
package.targets.append(
    .executableTarget(
        name: "LMDBBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "package-benchmark"),
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsLMDB", package: "AnyDefaults"),
        ],
        path: "Benchmarks/LMDBBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
)

// MARK: Changes from other processes (issue 11): delivery latency and idle cost, not a package-benchmark target.
// Run: scripts/change-latency
package.targets.append(
    .executableTarget(
        name: "ChangeLatency",
        dependencies: [.product(name: "AnyDefaults", package: "AnyDefaults")],
        path: "Benchmarks/ChangeLatency"
    )
)

// MARK: Benchmarks against the raw baselines (issue 13)
package.targets += [
    // What the benchmarks and the probe share, without the benchmark tooling: the raw C baselines
    // (libsqlite3 and liblmdb driven directly, as a C program would), the keys of the scale
    // stores, and the values the facade benchmarks read.
    .target(
        name: "BenchmarkData",
        dependencies: [
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsSQLite", package: "AnyDefaults"),
            .product(name: "AnyDefaultsLMDB", package: "AnyDefaults"),
        ],
        path: "Support/BenchmarkData"
    ),
    // Runs one operation in a loop, for profiling under callgrind (see Docs/Performance.md).
    .executableTarget(
        name: "BenchmarkProbe",
        dependencies: [
            "BenchmarkData",
            .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            .product(name: "AnyDefaultsMemory", package: "AnyDefaults"),
            .product(name: "AnyDefaultsJSONFile", package: "AnyDefaults"),
            .product(name: "AnyDefaultsSQLite", package: "AnyDefaults"),
            .product(name: "AnyDefaultsLMDB", package: "AnyDefaults"),
        ],
        path: "Support/BenchmarkProbe"
    ),
]
// Every benchmark target uses the shared support (not the probe, which runs without the tooling,
// nor ChangeLatency, which is not a package-benchmark target).
for target in package.targets where target.type == .executable && !["BenchmarkProbe", "ChangeLatency"].contains(target.name) {
    target.dependencies += ["BenchmarkSupport", "BenchmarkData"]
}
