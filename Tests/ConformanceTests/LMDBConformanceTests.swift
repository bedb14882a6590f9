import AnyDefaultsTesting
import Testing

private let lmdb = BackendConformance(store: "lmdb:{dir}/store", capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges])

@Suite struct LMDBConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) async throws { try await lmdb.run(group, cached: false) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) async throws { try await lmdb.run(group, cached: true) }
}
