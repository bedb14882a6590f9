#if !canImport(Darwin)
import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// Where swift-corelibs-foundation keeps the preferences of the current user: one property list
/// per suite, `<directory>/<suite>.plist`.
///
/// Foundation takes the directory from `XDG_CONFIG_HOME` (when it is an absolute path) or else
/// `$HOME/.config`, as the environment was when the process started: it ignores later changes
/// made with `setenv`. The start-up environment is read from `/proc/self/environ` for the same
/// reason, so that the provider writes the very file plain `UserDefaults` reads.
enum PreferencesLocation {
    /// Foundation's preferences directory for this process.
    static var directory: String { location.directory }

    /// The environment variable the directory came from, if its value is not valid UTF-8: the
    /// path would then be read with replacement characters, naming another directory, so the
    /// provider refuses to open.
    static var undecodableVariable: String? { location.undecodable }

    private static let location: (directory: String, undecodable: String?) = {
        let environment = startupEnvironment()
        func text(_ name: String) -> String? { environment[name].map { String(decoding: $0, as: UTF8.self) } }
        func undecodable(_ name: String) -> String? {
            environment[name].flatMap { String(validating: $0, as: UTF8.self) == nil ? name : nil }
        }
        if let configHome = text("XDG_CONFIG_HOME"), configHome.hasPrefix("/") {
            return (trimmingTrailingSlashes(configHome), undecodable("XDG_CONFIG_HOME"))
        }
        // Foundation uses "/.config" when HOME is unset; so do we.
        return (trimmingTrailingSlashes(text("HOME") ?? "") + "/.config", undecodable("HOME"))
    }()

    /// The name of the standard suite's file: the main bundle's identifier, else the process name
    /// (what Foundation uses for `kCFPreferencesCurrentApplication`).
    static var standardDomainName: String {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        return ProcessInfo.processInfo.processName
    }

    /// The property-list file of `suiteName`, or of the standard suite for `nil`.
    static func file(forSuite suiteName: String?) -> PropertyListFile {
        PropertyListFile(directory: directory, name: (suiteName ?? standardDomainName) + ".plist")
    }

    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// The environment the process started with, as bytes; the current one where `/proc` is
    /// unavailable.
    private static func startupEnvironment() -> [String: [UInt8]] {
        guard let bytes = try? PropertyListFile.readAll(path: "/proc/self/environ"), !bytes.isEmpty else {
            return ProcessInfo.processInfo.environment.mapValues { Array($0.utf8) }
        }
        var environment: [String: [UInt8]] = [:]
        for entry in bytes.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: entry[entry.startIndex..<equals], as: UTF8.self)
            // The first definition wins, as with getenv.
            if environment[name] == nil {
                environment[name] = Array(entry[(equals + 1)...])
            }
        }
        return environment
    }
}
#endif
