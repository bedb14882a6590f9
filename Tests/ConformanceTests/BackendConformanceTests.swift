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

    /// A journal in front of each backend kept in a file (`journal=on`), plain and cached: one
    /// process at a time, every write in the journal first.
    @Test(arguments: ["json", "sqlite", "lmdb"], BackendConformance.Group.allCases)
    func journaled(_ name: String, _ group: BackendConformance.Group) async throws {
        let backend = try TestBackend.named(name)
        for cached in [false, true] {
            let conformance = BackendConformance(
                store: backend.store(in: "{dir}", suite: "{id}") + "?journal=on", capabilities: [.persistent, .atomicBatch])
            try await conformance.run(group, cached: cached)
        }
    }
}
