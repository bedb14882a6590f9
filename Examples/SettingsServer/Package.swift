// swift-tools-version: 6.1
import PackageDescription

// An example: a per-tenant settings service over HTTP on Hummingbird 2, storing in any
// AnyDefaults store (see README.md and Docs/Server.md). A package of its own, so that users of
// AnyDefaults never resolve Hummingbird.
let package = Package(
    name: "SettingsServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AnyDefaults", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "SettingsServer",
            dependencies: [
                .product(name: "AnyDefaults", package: "AnyDefaults"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
