// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for AnyDefaults' decoders and parsers, in a package of their own so that the
// normal build never compiles them. Build and run them with ../scripts/fuzz (Docs/Reliability.md):
// they need `-sanitize=fuzzer` (Linux) and `-enable-testing` for the internal readers.
let package = Package(
    name: "AnyDefaultsFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AnyDefaults", path: ".."),
    ],
    targets: [
        // Starts libFuzzer from the targets' main.
        .target(name: "FuzzerDriver"),
        // DefaultsDecoder over DefaultsValue trees built from the input, and JSON decoding.
        .executableTarget(
            name: "FuzzCodable", dependencies: ["FuzzerDriver", .product(name: "AnyDefaultsCore", package: "AnyDefaults")]),
        // The JSON file backend's reader (ExactJSON.store(from:) and value(from:)).
        .executableTarget(
            name: "FuzzJSON", dependencies: ["FuzzerDriver", .product(name: "AnyDefaultsJSONFile", package: "AnyDefaults")]),
        // The UserDefaults backend's binary property-list reader and its file parser.
        .executableTarget(
            name: "FuzzPropertyList",
            dependencies: [
                "FuzzerDriver",
                .product(name: "AnyDefaultsUserDefaults", package: "AnyDefaults"),
                .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            ]),
        // The LMDB backend's binary value codec.
        .executableTarget(
            name: "FuzzLMDBCodec",
            dependencies: [
                "FuzzerDriver",
                .product(name: "AnyDefaultsLMDB", package: "AnyDefaults"),
                .product(name: "AnyDefaultsCore", package: "AnyDefaults"),
            ]),
        // StoreConfiguration(parsing:), ProviderRegistry.validate and the option parsers.
        .executableTarget(
            name: "FuzzConfiguration", dependencies: ["FuzzerDriver", .product(name: "AnyDefaults", package: "AnyDefaults")]),
    ],
    swiftLanguageModes: [.v6]
)

