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
    ],
    swiftLanguageModes: [.v6]
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
