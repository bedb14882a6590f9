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

    /// LMDB with `durability=mapped` (commits write the map in place, `MDB_WRITEMAP`), plain and
    /// cached: another way of writing, the same contract.
    @Test(arguments: BackendConformance.Group.allCases, [false, true])
    func lmdbMapped(_ group: BackendConformance.Group, cached: Bool) async throws {
        let lmdb = try TestBackend.named("lmdb")
        let conformance = BackendConformance(
            store: lmdb.store(in: "{dir}", suite: "{id}") + "?durability=mapped", capabilities: lmdb.capabilities)
        try await conformance.run(group, cached: cached)
    }
}
