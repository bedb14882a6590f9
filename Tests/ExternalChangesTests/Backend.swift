import AnyDefaults
import Foundation
import Testing
import TestSupport

/// A backend that reports changes made by other processes, as the tests drive it: how to name a
/// fresh store for the child (`TestChild`), and how to open and close it here.
struct Backend: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the keys of several commits read at once arrive in commit order (the change log of
    /// SQLite and LMDB). File backends (which rewrite the whole file) compare the old and new
    /// contents instead, so within such a burst the keys arrive in key order.
    let ordersKeysWithinABurst: Bool
    /// A configuration string for a new store called `name`, under `directory` for file backends.
    let configuration: @Sendable (_ directory: TemporaryDirectory, _ name: String) -> String
    /// Removes what the store leaves outside `directory`.
    let remove: @Sendable (_ configuration: String) -> Void

    var testDescription: String { name }

    /// The backends that report changes made by other processes on this platform (the catalog's
    /// TestBackend.reportingOtherProcesses).
    static let all: [Backend] = TestBackend.reportingOtherProcesses.map { backend in
        Backend(
            name: backend.name, ordersKeysWithinABurst: backend.keepsAChangeLog,
            configuration: { directory, name in
                backend.store(in: directory.path, name: name, suite: TestBackend.uniqueSuite(name.replacingOccurrences(of: "/", with: "-")))
            },
            remove: { TestBackend.removeSuite(of: $0) })
    }

    /// A store opened in this process, plain or behind a cache.
    struct Store {
        let provider: any DefaultsProvider
        /// Closes the store where the backend can be closed (SQLite, LMDB); the others stop with
        /// release.
        let close: () -> Void
    }

    func open(_ configuration: String, cached: Bool) throws -> Store {
        var parsed = try StoreConfiguration(parsing: configuration)
        parsed.cache = false
        let plain = try ProviderRegistry.standard.makeProvider(parsed)
        let (sqlite, lmdb) = (plain as? SQLiteProvider, plain as? LMDBProvider)
        return Store(provider: cached ? caching(plain) : plain, close: { sqlite?.close(); lmdb?.close() })
    }

    private func caching<Provider: DefaultsProvider>(_ provider: Provider) -> any DefaultsProvider { provider.cached() }

    /// Runs the child, which makes each of `writes` one write to the store, and waits for it.
    func write(_ configuration: String, _ writes: [String]) throws {
        let result = try ChildProcess.run("TestChild", ["apply", configuration] + writes)
        #expect(result.status == 0, "\(name): \(result.standardError)")
    }
}

/// Runs `body` with a fresh store of `backend` (its configuration string), removed afterwards.
func withStoreLocation<T>(_ backend: Backend, _ body: (String, TemporaryDirectory) throws -> T) throws -> T {
    try withTemporaryDirectory { directory in
        let configuration = backend.configuration(directory, "store")
        defer { backend.remove(configuration) }
        return try body(configuration, directory)
    }
}
