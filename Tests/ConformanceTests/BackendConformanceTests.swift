import AnyDefaultsTesting
import Testing
import TestSupport

/// The conformance suite on every backend of the catalog (TestBackend.all), each group plain and
/// cached, with the capabilities the catalog says the backend claims. Every group of every backend
/// runs at once with the others (each on a thread of its own, see `BackendConformance.run`).
@Suite struct BackendConformanceTests {
    @Test(arguments: TestBackend.all, BackendConformance.Group.allCases)
    func plain(_ backend: TestBackend, _ group: BackendConformance.Group) async throws {
        try await BackendConformance(backend).run(group, cached: false)
    }

    @Test(arguments: TestBackend.all, BackendConformance.Group.allCases)
    func cached(_ backend: TestBackend, _ group: BackendConformance.Group) async throws {
        try await BackendConformance(backend).run(group, cached: true)
    }
}
