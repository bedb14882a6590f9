// swift-tools-version: 6.1
import PackageDescription

// The layout mirrors the architecture (see Docs/Architecture.md):
// the core knows no backend, each backend is one target under Backends/,
// and the conformance suite ships as a library of its own.
let package = Package(
    name: "AnyDefaults",
    // Synchronization.Mutex needs these Apple OS versions.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "AnyDefaultsCore", targets: ["AnyDefaultsCore"]),
        .library(name: "AnyDefaultsMemory", targets: ["AnyDefaultsMemory"]),
        .library(name: "AnyDefaultsTesting", targets: ["AnyDefaultsTesting"]),
        .library(name: "AnyDefaults", targets: ["AnyDefaults"]),
        .executable(name: "anydefaults", targets: ["AnyDefaultsCLI"]),
    ],
    dependencies: [
        // Only the umbrella uses it, for its ConfigReader entry point.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
    ],
    targets: [
        .target(name: "AnyDefaultsCore"),
        .target(
            name: "AnyDefaults",
            dependencies: [
                "AnyDefaultsCore",
                "AnyDefaultsMemory",
                "AnyDefaultsJSONFile",
                "AnyDefaultsUserDefaults",
                "AnyDefaultsSQLite",
                "AnyDefaultsLMDB",
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        .target(name: "AnyDefaultsTesting", dependencies: ["AnyDefaultsCore"]),

        // MARK: Backends
        .target(name: "AnyDefaultsMemory", dependencies: ["AnyDefaultsCore"], path: "Backends/Memory"),

        // MARK: Tests
        // Temporary directories and child processes, shared by the test targets.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "AnyDefaultsCoreTests", dependencies: ["AnyDefaultsCore", "TestSupport"]),
        .testTarget(
            name: "AnyDefaultsTests",
            dependencies: ["AnyDefaults", "TestSupport", .product(name: "Configuration", package: "swift-configuration")]
        ),
        .testTarget(
            name: "AnyDefaultsTestingTests",
            dependencies: ["AnyDefaultsCore", "AnyDefaultsTesting", "AnyDefaultsMemory"]
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["AnyDefaultsCore", "AnyDefaultsTesting", "AnyDefaultsMemory"]
        ),

        // MARK: Caching (issue 7)
        .testTarget(name: "CachingProviderTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsMemory"]),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: Coder layer, typed keys and the Defaults facade
// Kept as a separate block so parallel edits above merge cleanly.
package.dependencies += [.package(url: "https://github.com/apple/swift-log", from: "1.16.2")]
for target in package.targets where target.name == "AnyDefaultsCore" {
    target.dependencies += [.product(name: "Logging", package: "swift-log")]
}
package.targets += [
    .testTarget(name: "AnyDefaultsCodingTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsMemory"]),
]

// MARK: JSON file backend (issue 5)
package.products.append(.library(name: "AnyDefaultsJSONFile", targets: ["AnyDefaultsJSONFile"]))
package.targets.append(contentsOf: [
    .target(name: "AnyDefaultsJSONFile", dependencies: ["AnyDefaultsCore"], path: "Backends/JSONFile"),
    // Runs writers in separate processes for the multi-process tests.
    .executableTarget(
        name: "JSONFileTestChild", dependencies: ["AnyDefaultsJSONFile"], path: "Tests/Children/JSONFileTestChild"),
    .testTarget(name: "AnyDefaultsJSONFileTests", dependencies: ["AnyDefaultsJSONFile", "TestSupport"]),
])
package.targets.first { $0.name == "ConformanceTests" }?.dependencies.append("AnyDefaultsJSONFile")
// MARK: UserDefaults backend (issue 6)
package.products.append(.library(name: "AnyDefaultsUserDefaults", targets: ["AnyDefaultsUserDefaults"]))
package.targets += [
    .target(name: "AnyDefaultsUserDefaults", dependencies: ["AnyDefaultsCore"], path: "Backends/UserDefaults"),
    .testTarget(
        name: "AnyDefaultsUserDefaultsTests",
        dependencies: ["AnyDefaultsUserDefaults", "AnyDefaultsCore", "TestSupport"]
    ),
    // Runs provider and plain-Foundation operations in another process, with its own XDG_CONFIG_HOME.
    .executableTarget(
        name: "UserDefaultsTestChild",
        dependencies: ["AnyDefaultsUserDefaults", "AnyDefaultsCore"],
        path: "Tests/Children/UserDefaultsTestChild"
    ),
]
// The conformance suite runs on the provider too.
package.targets.first { $0.name == "ConformanceTests" }?.dependencies.append("AnyDefaultsUserDefaults")

// MARK: SQLite backend (issue 3)
package.products.append(.library(name: "AnyDefaultsSQLite", targets: ["AnyDefaultsSQLite"]))
package.targets.append(contentsOf: [
    .systemLibrary(
        name: "CSQLite",
        path: "Backends/CSQLite",
        pkgConfig: "sqlite3",
        providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    .target(name: "AnyDefaultsSQLite", dependencies: ["AnyDefaultsCore", "CSQLite"], path: "Backends/SQLite"),
    // A real second process for the multi-process and permission tests.
    .executableTarget(
        name: "SQLiteTestChild",
        dependencies: ["AnyDefaultsCore", "AnyDefaultsSQLite"],
        path: "Tests/Children/SQLiteTestChild"
    ),
    .testTarget(
        name: "AnyDefaultsSQLiteTests",
        dependencies: ["AnyDefaultsCore", "AnyDefaultsSQLite", "CSQLite", "TestSupport"]
    ),
])
// The conformance suite runs on SQLiteProvider too.
if let conformance = package.targets.first(where: { $0.name == "ConformanceTests" }) {
    conformance.dependencies.append("AnyDefaultsSQLite")
}

// MARK: Property wrappers, observation, snapshots, transactions (issue 10)
// Kept as a separate block so parallel edits above merge cleanly.
for target in package.targets where target.name == "AnyDefaults" {
    target.dependencies += [.product(name: "Logging", package: "swift-log")]
}
package.targets += [
    .testTarget(name: "AnyDefaultsObservationTests", dependencies: ["AnyDefaults", "TestSupport"]),
]

// MARK: LMDB backend (issue 4): liblmdb through the CLMDB system-library shim
package.products.append(.library(name: "AnyDefaultsLMDB", targets: ["AnyDefaultsLMDB"]))
package.targets.append(contentsOf: [
    .systemLibrary(
        name: "CLMDB", path: "Backends/CLMDB", pkgConfig: "lmdb",
        providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
    ),
    .target(name: "AnyDefaultsLMDB", dependencies: ["AnyDefaultsCore", "CLMDB"], path: "Backends/LMDB"),
    // Child processes for the multi-process tests.
    .executableTarget(
        name: "LMDBTestChild", dependencies: ["AnyDefaultsCore", "AnyDefaultsLMDB"],
        path: "Tests/Children/LMDBTestChild"
    ),
    .testTarget(
        name: "AnyDefaultsLMDBTests",
        dependencies: ["AnyDefaultsCore", "AnyDefaultsLMDB", "CLMDB", "TestSupport"]
    ),
])
package.targets.first { $0.name == "ConformanceTests" }?.dependencies.append("AnyDefaultsLMDB")

// MARK: Command-line tool (issue 12)
package.dependencies.append(.package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"))
package.targets += [
    .executableTarget(
        name: "AnyDefaultsCLI",
        dependencies: ["AnyDefaults", "AnyDefaultsTesting", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    // Runs the built `anydefaults` executable as a child process.
    .testTarget(name: "AnyDefaultsCLITests", dependencies: ["AnyDefaults", "AnyDefaultsTesting", "TestSupport"]),
]

// MARK: Changes from other processes (issue 11)
// Every backend that claims .externalChanges, driven by a real second process.
package.targets += [
    .executableTarget(
        name: "ExternalChangesTestChild", dependencies: ["AnyDefaults"], path: "Tests/Children/ExternalChangesTestChild"),
    .testTarget(name: "ExternalChangesTests", dependencies: ["AnyDefaults", "TestSupport"]),
]
