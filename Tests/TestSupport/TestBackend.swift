import AnyDefaults
import Foundation

/// A built-in backend as the tests see it: the one catalog of "every backend". Tests that run on
/// each backend take their list from here (``all``, ``persistent``, ``reportingOtherProcesses``),
/// and `BackendCatalogTests` fails when the standard registry and this catalog disagree, so that
/// a backend missing from a build fails loudly instead of being skipped.
///
/// ```swift
/// @Test(arguments: TestBackend.all) func roundTrip(_ backend: TestBackend) throws {
///     try backend.withStore { store, _ in
///         let provider = try ProviderRegistry.standard.makeProvider(store)
///         // ...
///     }
/// }
/// ```
public struct TestBackend: Sendable, Hashable, CustomStringConvertible {
    /// The scheme of its store strings (`json`).
    public let scheme: String
    /// Its name in test names and messages (`JSON file`).
    public let name: String

    public var description: String { name }

    public static let memory = TestBackend(scheme: "memory", name: "memory")
    public static let jsonFile = TestBackend(scheme: "json", name: "JSON file")
    public static let userDefaults = TestBackend(scheme: "userdefaults", name: "UserDefaults")
    public static let sqlite = TestBackend(scheme: "sqlite", name: "SQLite")
    public static let lmdb = TestBackend(scheme: "lmdb", name: "LMDB")

    /// Every backend the umbrella has in this build whose stores need no server. A backend the
    /// build leaves out (LMDB without its package trait, or where liblmdb does not link) is left
    /// out here at compile time, never skipped at run time.
    /// (In the order the tool's tests have always run them one after another: `bench --stores`.)
    public static let all: [TestBackend] = {
        var all = [memory, jsonFile, sqlite]
        #if canImport(AnyDefaultsLMDB)
        all.append(lmdb)
        #endif
        return all + [userDefaults]
    }()

    /// The schemes of the built-in backends that need a server (AnyDefaultsPostgreSQLTests starts
    /// one): they are not in ``all``.
    public static let serverSchemes: Set<String> = {
        #if canImport(AnyDefaultsPostgreSQL)
        ["postgres", "postgresql"]
        #else
        []
        #endif
    }()

    /// The backends whose values outlive the process.
    public static let persistent = all.filter(\.isPersistent)

    /// The backends whose stores report changes made by other processes on this platform.
    public static let reportingOtherProcesses = all.filter(\.reportsOtherProcesses)

    /// The backend of `scheme`: a test that names a backend this catalog does not have fails here.
    public static func named(_ scheme: String) throws -> TestBackend {
        guard let backend = all.first(where: { $0.scheme == scheme }) else {
            throw NotInCatalog(scheme: scheme)
        }
        return backend
    }

    public struct NotInCatalog: Error, CustomStringConvertible {
        public var scheme: String
        public var description: String {
            "The backend \(scheme): is not in TestBackend.all (Tests/TestSupport/TestBackend.swift): not built on this platform, or missing from the catalog."
        }
    }

    public var isPersistent: Bool { self != .memory }

    /// Whether its stores report changes made by other processes: `userdefaults:` does on Linux
    /// only, where the provider watches the suite's file (on Apple platforms cfprefsd owns it).
    public var reportsOtherProcesses: Bool {
        switch self {
        case .memory: false
        case .userDefaults:
            #if canImport(Darwin)
            false
            #else
            true
            #endif
        default: true
        }
    }

    /// Whether it keeps a change log (SQLite, LMDB), so that the keys of several commits read at
    /// once arrive in commit order. File backends compare the old and new contents instead: within
    /// such a burst the keys arrive in key order.
    public var keepsAChangeLog: Bool { self == .sqlite || self == .lmdb }

    /// The capabilities its providers claim (the conformance suite checks each claim).
    public var capabilities: DefaultsCapabilities {
        switch self {
        case .memory: [.atomicBatch]
        case .userDefaults: UserDefaultsProvider.supportedCapabilities
        default: [.persistent, .atomicBatch, .multiProcess, .externalChanges]
        }
    }

    /// The store string of a store called `name` in `directory`; for `userdefaults:`, the suite
    /// `suite` (one of this process's preferences, so unique per store: ``uniqueSuite(_:)``).
    /// Placeholders work too: `store(in: "{dir}", suite: "{id}")`.
    public func store(in directory: String, name: String = "store", suite: String) -> String {
        switch self {
        case .memory: "memory:"
        case .jsonFile: "json:\(directory)/\(name).json"
        case .userDefaults: "userdefaults:\(suite)"
        case .sqlite: "sqlite:\(directory)/\(name).sqlite"
        default: "\(scheme):\(directory)/\(name)"
        }
    }

    /// A suite name no other store of any test process uses.
    public static func uniqueSuite(_ purpose: String = "test") -> String {
        "anydefaults-\(purpose)-\(UUID().uuidString)"
    }

    /// Removes the suite of a `userdefaults:` store string from this process's preferences (its
    /// file, on Linux); nothing for other stores.
    public static func removeSuite(of store: String) {
        guard store.hasPrefix("userdefaults:") else { return }
        let suite = String(store.dropFirst("userdefaults:".count).prefix { $0 != "?" })
        guard !suite.isEmpty else { return }
        try? UserDefaultsProvider.removeSuite(named: suite)
    }

    /// Runs `body` with the store string of a fresh store (in a temporary directory, or a unique
    /// suite) and that directory, and removes what the store left.
    public func withStore<T>(name: String = "store", _ body: (_ store: String, _ directory: TemporaryDirectory) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            let store = store(in: directory.path, name: name, suite: Self.uniqueSuite())
            defer { Self.removeSuite(of: store) }
            return try body(store, directory)
        }
    }

    /// The async form of ``withStore(name:_:)``.
    public func withStore<T>(name: String = "store", _ body: (_ store: String, _ directory: TemporaryDirectory) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { directory in
            let store = store(in: directory.path, name: name, suite: Self.uniqueSuite())
            defer { Self.removeSuite(of: store) }
            return try await body(store, directory)
        }
    }
}
