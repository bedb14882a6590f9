import AnyDefaults
import AnyDefaultsTesting
import Testing
import TestSupport

/// The conformance suite against a real server (the shared throwaway cluster), plain and cached.
/// Each group runs in a namespace of its own, named by the suite's storage identifier, so a
/// reopened instance finds the same store. Opening goes through the store string, as a child
/// process of the suite's multi-process checks would.
private let suites: (plain: DefaultsConformanceSuite, cached: DefaultsConformanceSuite) = {
    let capabilities: DefaultsCapabilities = [.persistent, .atomicBatch, .multiProcess, .externalChanges]
    let open: @Sendable (ConformanceStorage) throws -> PostgreSQLProvider = { storage in
        let store = try PostgreSQLCluster.shared().storeString(namespace: "conformance-" + storage.identifier)
        return try PostgreSQLProvider(url: store)
    }
    return (
        DefaultsConformanceSuite(capabilities: capabilities) { try open($0) },
        DefaultsConformanceSuite(capabilities: capabilities) { try open($0).cached() }
    )
}()

@Suite struct PostgreSQLConformanceTests {
    @Test(arguments: DefaultsConformanceSuite.Group.allCases)
    func plain(_ group: DefaultsConformanceSuite.Group) throws { try suites.plain.run(group) }

    @Test(arguments: DefaultsConformanceSuite.Group.allCases)
    func cached(_ group: DefaultsConformanceSuite.Group) throws { try suites.cached.run(group) }
}
