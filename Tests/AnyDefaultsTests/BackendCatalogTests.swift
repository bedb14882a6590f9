import AnyDefaults
import Testing
import TestSupport

/// The tests' one catalog of backends (TestBackend) is the package's: every scheme the standard
/// registry of this build opens is in it (or needs a server, and has tests of its own), and every
/// backend in it is registered. A backend missing from a build fails here, by name, rather than
/// being skipped by the tests that run on each backend.
@Suite struct BackendCatalogTests {
    @Test func theCatalogIsEveryRegisteredBackend() {
        let registered = Set(ProviderRegistry.standard.registered.map(\.scheme))
        let catalog = Set(TestBackend.all.map(\.scheme))
        #expect(catalog.subtracting(registered).isEmpty, "in TestBackend.all but not registered in this build: \(catalog.subtracting(registered).sorted())")
        let unknown = registered.subtracting(catalog).subtracting(TestBackend.serverSchemes)
        #expect(unknown.isEmpty, "registered but missing from TestBackend.all (Tests/TestSupport/TestBackend.swift): \(unknown.sorted())")
        #expect(TestBackend.serverSchemes.isSubset(of: registered), "server schemes not registered: \(TestBackend.serverSchemes.subtracting(registered).sorted())")
    }

    /// What the catalog says of each backend is what its providers do: the capabilities they
    /// claim, persistence, and reporting other processes' changes.
    @Test(arguments: TestBackend.all)
    func eachBackendIsWhatTheCatalogSays(_ backend: TestBackend) throws {
        try backend.withStore { store, _ in
            let provider = try ProviderRegistry.standard.makeProvider(store + "?cache=off")
            #expect(provider.capabilities == backend.capabilities)
            #expect(provider.capabilities.contains(.persistent) == backend.isPersistent)
            #expect(provider.capabilities.contains(.externalChanges) == backend.reportsOtherProcesses)
        }
    }

    /// A test that names a backend the catalog does not have fails with a message saying so.
    @Test func aBackendNotInTheCatalogFailsLoudly() {
        #expect(throws: TestBackend.NotInCatalog.self) { try TestBackend.named("no-such-backend") }
        #expect(throws: Never.self) { try TestBackend.named("sqlite") }
    }
}
