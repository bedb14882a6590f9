import AnyDefaults
import Foundation
import TestSupport

/// A store of one persistent backend for a reliability test: its store string, the environment a
/// child process needs to open the same store, and the file that holds its data.
///
/// Every test opens stores through `ProviderRegistry.standard` with `cache=off`, so the tests cover
/// any backend registered there; backends not registered yet (SQLite and LMDB before they land)
/// are skipped.
struct TestStore: Sendable {
    let scheme: String
    /// The store string, without `cache=off`.
    let store: String
    /// What a child process needs in its environment to open the same store.
    let environment: [String: String]
    /// The file that holds the data, which the corruption tests damage.
    let dataFile: String
    /// The suite to remove afterwards, for a UserDefaults store in this process's preferences.
    private let suite: String?
    /// The one instance of a `memory:` store, which every ``open(_:)`` returns: it is gone with
    /// its instance.
    private let memory: (any DefaultsProvider)?

    /// The persistent backends of the umbrella, whether or not they are registered yet.
    static let persistentSchemes = ["json", "userdefaults", "sqlite", "lmdb"]

    /// Every backend of the umbrella, including the in-memory one.
    static let allSchemes = ["memory"] + persistentSchemes

    /// Whether `scheme` is registered in the standard registry of this build.
    static func isAvailable(_ scheme: String) -> Bool {
        ProviderRegistry.standard.registered.contains { $0.scheme == scheme }
    }

    /// A new store of `scheme` in `directory`.
    ///
    /// - Parameter forChildren: for a store that child processes open: a UserDefaults suite then
    ///   lives in a preferences directory of its own inside `directory` (children get
    ///   `XDG_CONFIG_HOME`); otherwise it is a uniquely named suite in this process's preferences
    ///   directory (Foundation fixes that directory when the process starts).
    init(_ scheme: String, in directory: TemporaryDirectory, name: String = "store", forChildren: Bool = false) {
        self.init(scheme, base: directory.path, name: name, forChildren: forChildren)
    }

    /// A new store of `scheme` in the directory `base`, which need not exist yet.
    init(_ scheme: String, base: String, name: String = "store", forChildren: Bool = false) {
        self.scheme = scheme
        var environment: [String: String] = [:]
        var suite: String?
        switch scheme {
        case "memory":
            store = "memory:"
            dataFile = ""
        case "json":
            store = "json:" + base + "/\(name).json"
            dataFile = base + "/\(name).json"
        case "userdefaults" where forChildren:
            let preferences = base + "/preferences"
            environment["XDG_CONFIG_HOME"] = preferences
            store = "userdefaults:\(name)"
            dataFile = preferences + "/\(name).plist"
        case "userdefaults":
            let name = "anydefaults-reliability-\(UUID().uuidString)"
            suite = name
            store = "userdefaults:\(name)"
            dataFile = (try? UserDefaultsProvider.propertyListURL(forSuite: name)?.path) ?? ""
        case "sqlite":
            store = "sqlite:" + base + "/\(name).sqlite"
            dataFile = base + "/\(name).sqlite"
        case "lmdb":
            store = "lmdb:" + base + "/" + name
            dataFile = base + "/" + name + "/data.mdb"
        default:
            store = "\(scheme):" + base + "/" + name
            dataFile = base + "/" + name
        }
        self.environment = environment
        self.suite = suite
        memory = scheme == "memory" ? try? ProviderRegistry.standard.makeProvider("memory:?cache=off") : nil
    }

    /// The store string with `options` added (`"recovery=moveaside"`), and the cache off.
    func string(_ options: String...) -> String {
        string(options)
    }

    private func string(_ options: [String]) -> String {
        store + "?" + (options + ["cache=off"]).joined(separator: "&")
    }

    /// Opens the store, without the cache.
    func open(_ options: String...) throws -> any DefaultsProvider {
        if let memory { return memory }
        return try ProviderRegistry.standard.makeProvider(string(options))
    }

    /// Removes what the store left outside its temporary directory (a UserDefaults suite in this
    /// process's preferences, with the damaged copies moved aside next to it).
    func remove() {
        guard let suite else { return }
        try? UserDefaultsProvider.removeSuite(named: suite)
        let directory = (dataFile as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(suite + ".plist") || name.hasPrefix("." + suite + ".plist") {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }
}

/// Runs `body` with a new store of `scheme` in a temporary directory, and removes both afterwards.
func withTestStore<T>(
    _ scheme: String, name: String = "store", forChildren: Bool = false, _ body: (TestStore, TemporaryDirectory) throws -> T
) throws -> T {
    try withTemporaryDirectory { directory in
        let store = TestStore(scheme, in: directory, name: name, forChildren: forChildren)
        defer { store.remove() }
        return try body(store, directory)
    }
}
