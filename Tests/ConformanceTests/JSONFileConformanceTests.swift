import AnyDefaultsTesting
import Testing

private let json = BackendConformance(store: "json:{dir}/settings.json", capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges])

@Suite struct JSONFileConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) async throws { try await json.run(group, cached: false) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) async throws { try await json.run(group, cached: true) }
}
