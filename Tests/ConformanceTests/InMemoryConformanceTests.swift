import AnyDefaultsMemory
import AnyDefaultsTesting
import Testing

private let memory = BackendConformance(store: "memory:", capabilities: InMemoryProvider().capabilities)

@Suite struct InMemoryConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) async throws { try await memory.run(group, cached: false) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) async throws { try await memory.run(group, cached: true) }
}
