import AnyDefaultsTesting
import Testing

private let sqlite = BackendConformance(store: "sqlite:{dir}/store.sqlite", capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges])

@Suite struct SQLiteConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) async throws { try await sqlite.run(group, cached: false) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) async throws { try await sqlite.run(group, cached: true) }
}
