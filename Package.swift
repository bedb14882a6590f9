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
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        .target(name: "AnyDefaultsTesting", dependencies: ["AnyDefaultsCore"]),

        .executableTarget(name: "AnyDefaultsCLI", dependencies: ["AnyDefaultsCore", "AnyDefaultsMemory"]),

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
    ],
    swiftLanguageModes: [.v6]
)

// MARK: LMDB backend (liblmdb through the CLMDB system-library shim)
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
