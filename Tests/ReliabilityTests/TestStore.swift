import AnyDefaults
import Foundation
import TestSupport

/// A store of one persistent backend for a reliability test: its store string, the environment a
/// child process needs to open the same store, and the file that holds its data.
///
/// Every test opens stores through `ProviderRegistry.standard` with `cache=off`, on the backends of
/// the one catalog (`TestBackend` in TestSupport); a backend missing from the build fails the test.
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

    /// The persistent backends (TestBackend.persistent).
    static let persistentSchemes = TestBackend.persistent.map(\.scheme)

    /// Every backend, including the in-memory one (TestBackend.all).
    static let allSchemes = TestBackend.all.map(\.scheme)

    /// A new store of `scheme` in `directory`.
    ///
    /// - Parameter forChildren: for a store that child processes open: a UserDefaults suite then
    ///   lives in a preferences directory of its own inside `directory` (children get
    ///   `XDG_CONFIG_HOME`); otherwise it is a uniquely named suite in this process's preferences
    ///   directory (Foundation fixes that directory when the process starts).
    init(_ scheme: String, in directory: TemporaryDirectory, name: String = "store", forChildren: Bool = false) throws {
        try self.init(scheme, base: directory.path, name: name, forChildren: forChildren)
    }

    /// A new store of `scheme` in the directory `base`, which need not exist yet.
    init(_ scheme: String, base: String, name: String = "store", forChildren: Bool = false) throws {
        self.scheme = scheme
        var environment: [String: String] = [:]
        var suite: String?
        let backend = try TestBackend.named(scheme)
        switch backend {
        case .memory:
            store = backend.store(in: base, suite: "")
            dataFile = ""
        case .userDefaults where forChildren:
            let preferences = base + "/preferences"
            environment["XDG_CONFIG_HOME"] = preferences
            store = backend.store(in: base, suite: name)
            dataFile = preferences + "/\(name).plist"
        case .userDefaults:
            let name = TestBackend.uniqueSuite("reliability")
            suite = name
            store = backend.store(in: base, suite: name)
            dataFile = (try? UserDefaultsProvider.propertyListURL(forSuite: name)?.path) ?? ""
        case .lmdb:
            store = backend.store(in: base, name: name, suite: "")
            dataFile = base + "/" + name + "/data.mdb"
        default:
            store = backend.store(in: base, name: name, suite: "")
            dataFile = String(store.dropFirst(scheme.count + 1))
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
        let store = try TestStore(scheme, in: directory, name: name, forChildren: forChildren)
        defer { store.remove() }
        return try body(store, directory)
    }
}
