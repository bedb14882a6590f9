import Foundation
import TestSupport

/// `swiftc -typecheck` against the modules this package built, as a user's file that imports them
/// is compiled: the macro plug-in loaded, the C libraries' module maps given.
enum SwiftCompiler {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Type-checks `source` (a main file, or a library file when `library`) and returns the
    /// compiler's diagnostics; an empty string when there are none.
    static func typecheck(_ source: String, name: String, library: Bool = false, manifest: Bool = false) throws -> ChildProcess.Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(manifest ? "Package.swift" : library ? "\(name).swift" : "main.swift")
        try Data(source.utf8).write(to: file)
        var arguments = ["-typecheck", "-swift-version", "6", file.path]
        if manifest {
            let api = try toolchain().appendingPathComponent("lib/swift/pm/ManifestAPI").path
            arguments += ["-I", api, "-package-description-version", "6.1.0"]
        } else {
            arguments += try moduleArguments()
            if library { arguments.append("-parse-as-library") }
        }
        return try ChildProcess.run(executable: swiftc(), arguments)
    }

    /// `swiftc` on the `PATH`, the one that built this package.
    static func swiftc() throws -> URL {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swiftc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw Failure(description: "swiftc is not on the PATH")
    }

    /// The toolchain's `usr` directory.
    static func toolchain() throws -> URL {
        try swiftc().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Where the modules of this package and its dependencies are, their C module maps, and the
    /// macro plug-in.
    static func moduleArguments() throws -> [String] {
        let products = ChildProcess.productsDirectory
        let modules = products.appendingPathComponent("Modules")
        guard FileManager.default.fileExists(atPath: modules.appendingPathComponent("AnyDefaults.swiftmodule").path) else {
            throw Failure(description: "no built AnyDefaults module in \(modules.path): run `swift build --build-tests` first")
        }
        var arguments = ["-I", modules.path]
        for map in try moduleMaps(products: products) { arguments += ["-Xcc", "-fmodule-map-file=\(map)"] }
        let plugin = try ChildProcess.executable("AnyDefaultsMacrosPlugin-tool")
        arguments += ["-load-plugin-executable", "\(plugin.path)#AnyDefaultsMacrosPlugin"]
        return arguments
    }

    /// The module maps of the C modules a Swift module here may import: the system libraries'
    /// (Backends/CSQLite, Backends/CLMDB) and those the build wrote for C targets of dependencies.
    static func moduleMaps(products: URL) throws -> [String] {
        var maps = ["Backends/CSQLite", "Backends/CLMDB"].map { root.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
        // The host tools' copies (`-tool.build`) would define the same modules again.
        for entry in try FileManager.default.contentsOfDirectory(atPath: products.path) where entry.hasSuffix(".build") && !entry.hasSuffix("-tool.build") {
            let map = products.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { maps.append(map.path) }
        }
        for checkout in (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".build/checkouts").path)) ?? [] {
            let sources = root.appendingPathComponent(".build/checkouts").appendingPathComponent(checkout).appendingPathComponent("Sources")
            guard let enumerator = FileManager.default.enumerator(atPath: sources.path) else { continue }
            for case let path as String in enumerator where path.hasSuffix("include/module.modulemap") {
                maps.append(sources.appendingPathComponent(path).path)
            }
        }
        return maps
    }
}
