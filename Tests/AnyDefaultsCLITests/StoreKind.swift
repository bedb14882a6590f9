import AnyDefaults
import Foundation
import Testing
import TestSupport

/// A persistent backend as the reliability tests of the tool use it: a store of that kind in the
/// sandbox, where its files are, and how to spell its location.
struct StoreKind: Sendable, CustomTestStringConvertible {
    var scheme: String

    var testDescription: String { scheme + ":" }

    static let json = StoreKind(scheme: "json")
    static let sqlite = StoreKind(scheme: "sqlite")
    static let lmdb = StoreKind(scheme: "lmdb")
    static let userDefaults = StoreKind(scheme: "userdefaults")

    /// Every persistent backend (the catalog's TestBackend.persistent).
    static let persistent = TestBackend.persistent.map { StoreKind(scheme: $0.scheme) }
    /// The backends whose location is a path the user spells.
    static let pathBased = persistent.filter { $0.scheme != userDefaults.scheme }
    /// The backends whose files the tool's file layer writes (the others belong to the engines).
    static let fileWritten = [json, userDefaults]

    /// The location for a store named `name`: a path in the sandbox, or a suite name.
    func location(_ cli: CLI, _ name: String = "store") -> String {
        switch scheme {
        case "json": cli.path(name + ".json")
        case "sqlite": cli.path(name + ".sqlite")
        case "lmdb": cli.path(name + ".lmdb")
        default: "com.example.cli-tests." + name
        }
    }

    /// The store string of a store named `name`, with `location` in place of its own if given.
    func store(_ cli: CLI, _ name: String = "store", location: String? = nil) -> String {
        scheme + ":" + (location ?? self.location(cli, name))
    }

    /// The file that holds the data (a suite's property list for `userdefaults:`).
    func dataFile(_ cli: CLI, _ name: String = "store") -> String {
        files(cli, name)[0]
    }

    /// Every file of the store named `name`, the data file first, whether or not it exists.
    func files(_ cli: CLI, _ name: String = "store") -> [String] {
        let location = location(cli, name)
        switch scheme {
        case "json": return [location, location + ".lock"]
        case "sqlite": return [location, location + "-wal", location + "-shm", location + "-journal", location + "-counter", location + "-reserve"]
        case "lmdb": return [location + "/data.mdb", location + "/lock.mdb", location + "/counter"]
        default: return [cli.path("config/\(location).plist")]
        }
    }

    /// The bytes of each existing file of the store, to show that nothing was touched.
    func snapshot(_ cli: CLI, _ name: String = "store") -> [String: Data] {
        var result: [String: Data] = [:]
        for file in files(cli, name) { result[file] = FileManager.default.contents(atPath: file) }
        return result
    }
}

/// The settings the tests put in a store: a few of every kind.
let sampleValues: [String: DefaultsValue] = [
    "ui.theme": .string("dark"), "launchCount": .int(3), "volume": .double(-0.0), "onboarded": .bool(true),
    "recent": .array([.string("a"), .int(1)]), "window": .dictionary(["width": .int(1280)]),
]

/// A path to `absolute` relative to the current directory (`../../tmp/...`).
func relativePath(to absolute: String) -> String {
    let here = FileManager.default.currentDirectoryPath.split(separator: "/")
    return String(repeating: "../", count: here.count) + absolute.drop { $0 == "/" }
}
