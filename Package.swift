// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// The platforms where the system's liblmdb can be linked by default (no Apple SDK has it).
let linuxLike: [Platform] = [.linux, .android, .openbsd]

/// The platforms without Apple's Combine, where AnyDefaultsCombine uses OpenCombine.
let withoutCombine: [Platform] = [.linux, .windows, .android, .openbsd, .wasi]

// The layout mirrors the architecture (see Docs/Architecture.md): the core knows no backend, each
// backend is one target under Backends/ (with its system-library shim beside it), the umbrella
// registers them all, and the conformance suite ships as a library of its own.
let package = Package(
    name: "AnyDefaults",
    // Synchronization.Mutex needs these Apple OS versions.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "AnyDefaultsCore", targets: ["AnyDefaultsCore"]),
        .library(name: "AnyDefaultsMemory", targets: ["AnyDefaultsMemory"]),
        .library(name: "AnyDefaultsJSONFile", targets: ["AnyDefaultsJSONFile"]),
        .library(name: "AnyDefaultsUserDefaults", targets: ["AnyDefaultsUserDefaults"]),
        .library(name: "AnyDefaultsSQLite", targets: ["AnyDefaultsSQLite"]),
        .library(name: "AnyDefaultsLMDB", targets: ["AnyDefaultsLMDB"]),
        .library(name: "AnyDefaultsPostgreSQL", targets: ["AnyDefaultsPostgreSQL"]),
        .library(name: "AnyDefaults", targets: ["AnyDefaults"]),
        .library(name: "AnyDefaultsTesting", targets: ["AnyDefaultsTesting"]),
        // For an app's test target: the `.defaultsStore` trait (Swift Testing), so that the conformance
        // suite above and the tool that uses it never link Swift Testing.
        .library(name: "AnyDefaultsTestTraits", targets: ["AnyDefaultsTestTraits"]),
        // XCTest's skipping for the suite; apart, so that linking the suite never links XCTest.
        .library(name: "AnyDefaultsTestingXCTest", targets: ["AnyDefaultsTestingXCTest"]),
        // Macros: only this product builds swift-syntax and the compiler plug-in.
        .library(name: "AnyDefaultsMacros", targets: ["AnyDefaultsMacros"]),
        .library(name: "AnyDefaultsCombine", targets: ["AnyDefaultsCombine"]),
        .executable(name: "anydefaults", targets: ["AnyDefaultsCLI"]),
    ],
    traits: [
        .trait(
            name: "LMDB",
            description: "The umbrella registers lmdb: and re-exports AnyDefaultsLMDB, where the system's liblmdb can link (Linux, Android, OpenBSD; no Apple SDK has liblmdb: there, depend on the AnyDefaultsLMDB product after `brew install lmdb`)."
        ),
        .trait(
            name: "PostgreSQL",
            description: "The umbrella registers postgres:// and re-exports AnyDefaultsPostgreSQL (builds postgres-nio and SwiftNIO). Leave it out with `traits: [\"LMDB\"]` when no store is on a server."
        ),
        .default(enabledTraits: ["LMDB", "PostgreSQL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only the umbrella uses it, for its ConfigReader entry point.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        // Only the command-line tool uses it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Only the macro plug-in and its tests use it. 603 is the release made with Swift 6.3,
        // the toolchain this package builds with: its parser knows all the syntax that compiler does.
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // Only the PostgreSQL backend uses it (and brings SwiftNIO with it).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Only AnyDefaultsCombine uses it, and only where Apple's Combine is missing.
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        // MARK: The framework
        // The C library (Glibc, Musl or Darwin), imported in one place; not a product.
        .target(name: "AnyDefaultsPlatform"),
        .target(name: "AnyDefaultsCore", dependencies: ["AnyDefaultsPlatform", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "AnyDefaults",
            dependencies: [
                "AnyDefaultsCore", "AnyDefaultsMemory", "AnyDefaultsJSONFile", "AnyDefaultsUserDefaults", "AnyDefaultsSQLite",
                // Optional backends, by trait; the code asks `#if canImport(...)`.
                .target(name: "AnyDefaultsLMDB", condition: .when(platforms: linuxLike, traits: ["LMDB"])),
                .target(name: "AnyDefaultsPostgreSQL", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "AnyDefaultsTesting", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform"]),
        .target(name: "AnyDefaultsTestTraits", dependencies: ["AnyDefaults"]),
        .target(name: "AnyDefaultsTestingXCTest", dependencies: ["AnyDefaultsTesting"]),
        // The macros (the plug-in runs in the compiler) and what their expansions call.
        .target(name: "AnyDefaultsMacros", dependencies: ["AnyDefaults", "AnyDefaultsMacrosPlugin"]),
        // The plug-in is its entry point and names: the macros live in a plain target, which the
        // tests import. A test that depends on a `.macro` target makes SwiftPM build the whole test
        // graph (every target and dependency) a second time for the host.
        .macro(
            name: "AnyDefaultsMacrosPlugin",
            dependencies: [
                "AnyDefaultsMacrosImplementation",
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "AnyDefaultsMacrosImplementation",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // Combine publishers: Apple's Combine where it exists, OpenCombine elsewhere (never built
        // for Apple platforms).
        .target(
            name: "AnyDefaultsCombine",
            dependencies: [
                "AnyDefaults",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: withoutCombine)),
                .product(name: "OpenCombineDispatch", package: "OpenCombine", condition: .when(platforms: withoutCombine)),
            ]
        ),
        .executableTarget(
            name: "AnyDefaultsCLI",
            dependencies: ["AnyDefaults", "AnyDefaultsTesting", "AnyDefaultsPlatform", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // MARK: Backends
        .target(name: "AnyDefaultsMemory", dependencies: ["AnyDefaultsCore"], path: "Backends/Memory"),
        .target(name: "AnyDefaultsJSONFile", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform"], path: "Backends/JSONFile"),
        .target(name: "AnyDefaultsUserDefaults", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform"], path: "Backends/UserDefaults"),
        .systemLibrary(
            name: "CSQLite", path: "Backends/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "AnyDefaultsSQLite", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform", "CSQLite"], path: "Backends/SQLite"),
        .systemLibrary(
            name: "CLMDB", path: "Backends/CLMDB", pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .target(name: "AnyDefaultsLMDB", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform", "CLMDB"], path: "Backends/LMDB"),
        .target(
            name: "AnyDefaultsPostgreSQL",
            dependencies: ["AnyDefaultsCore", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Backends/PostgreSQL"
        ),

        // MARK: Test support: temporary directories, child processes, the catalog of every backend
        .target(name: "TestSupport", dependencies: ["AnyDefaults", "AnyDefaultsPlatform"], path: "Tests/TestSupport"),
        // Deliberately broken providers (and their correct reference) for the conformance suite's own tests.
        .target(name: "BrokenProviders", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform", "AnyDefaultsTesting"], path: "Tests/BrokenProviders"),
        // The one child process of the tests: real second processes for the multi-process, crash,
        // permission, external-change and conformance tests, and for what uses process-wide state
        // (Defaults.standard, Combine's mock flag). Every command opens its store by store string.
        .executableTarget(
            name: "TestChild",
            dependencies: [
                "AnyDefaults", "AnyDefaultsPlatform", "AnyDefaultsTesting", "AnyDefaultsCombine", "BrokenProviders", "TestSupport",
                .target(name: "CLMDB", condition: .when(platforms: linuxLike, traits: ["LMDB"])),
            ],
            path: "Tests/Children/TestChild"),

        // MARK: Tests: one target per module, and the conformance suite on every backend
        .testTarget(name: "AnyDefaultsCoreTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform", "TestSupport"]),
        .testTarget(name: "CachingProviderTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsMemory", "AnyDefaultsPlatform", "TestSupport"]),
        .testTarget(name: "AnyDefaultsCodingTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsMemory"]),
        .testTarget(name: "AnyDefaultsObservationTests", dependencies: ["AnyDefaults", "TestSupport"]),
        .testTarget(name: "AnyDefaultsJSONFileTests", dependencies: ["AnyDefaultsJSONFile", "TestSupport"]),
        .testTarget(name: "AnyDefaultsUserDefaultsTests", dependencies: ["AnyDefaultsUserDefaults", "AnyDefaultsCore", "TestSupport"]),
        .testTarget(name: "AnyDefaultsSQLiteTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsPlatform", "AnyDefaultsSQLite", "CSQLite", "TestSupport"]),
        .testTarget(name: "AnyDefaultsLMDBTests", dependencies: ["AnyDefaultsCore", "AnyDefaultsLMDB", "AnyDefaultsPlatform", "CLMDB", "TestSupport"]),
        .testTarget(
            name: "AnyDefaultsTests",
            dependencies: ["AnyDefaults", "TestSupport", .product(name: "Configuration", package: "swift-configuration")]
        ),
        .testTarget(
            name: "AnyDefaultsTestingTests",
            dependencies: ["AnyDefaultsCore", "AnyDefaultsTesting", "AnyDefaultsTestingXCTest", "AnyDefaultsMemory", "BrokenProviders", "TestSupport"]
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "AnyDefaults", "AnyDefaultsCore", "AnyDefaultsTesting", "AnyDefaultsMemory", "AnyDefaultsJSONFile",
                "AnyDefaultsUserDefaults", "AnyDefaultsSQLite", "AnyDefaultsLMDB", "TestSupport",
            ]
        ),
        .testTarget(name: "AnyDefaultsCLITests", dependencies: ["AnyDefaults", "AnyDefaultsPlatform", "AnyDefaultsTesting", "TestSupport"]),
        .testTarget(name: "ReliabilityTests", dependencies: ["AnyDefaults", "AnyDefaultsPlatform", "TestSupport"]),
        // Against a throwaway PostgreSQL cluster that the target starts (TestSupport's PostgreSQLCluster).
        .testTarget(
            name: "AnyDefaultsPostgreSQLTests",
            dependencies: [
                "AnyDefaults", "AnyDefaultsPostgreSQL", "AnyDefaultsTesting", "TestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(name: "ExternalChangesTests", dependencies: ["AnyDefaults", "TestSupport"]),
        .testTarget(name: "AnyDefaultsMacrosTests", dependencies: ["AnyDefaultsMacros", "TestSupport"]),
        .testTarget(
            name: "AnyDefaultsMacrosPluginTests",
            dependencies: [
                "AnyDefaultsMacrosImplementation",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
        .testTarget(name: "AnyDefaultsCombineTests", dependencies: ["AnyDefaultsCombine", "TestSupport"]),
        // Every Swift block of README.md and Docs/*.md, type-checked against the built modules.
        .testTarget(
            name: "DocumentationTests",
            dependencies: [
                "AnyDefaults", "AnyDefaultsMacros", "AnyDefaultsCombine", "AnyDefaultsTesting", "AnyDefaultsTestTraits", "TestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // Test isolation of `Defaults.standard` for everything that uses it, macros and Combine included.
        .testTarget(
            name: "AnyDefaultsTestTraitsTests",
            dependencies: ["AnyDefaultsTestTraits", "AnyDefaultsMacros", "AnyDefaultsCombine", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
