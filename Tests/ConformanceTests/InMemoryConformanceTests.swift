import AnyDefaultsMemory
import AnyDefaultsTesting
import Testing

private let memory = BackendConformance(capabilities: InMemoryProvider().capabilities) { _ in InMemoryProvider() }

@Suite struct InMemoryConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try memory.plain.run(group) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try memory.cached.run(group) }
}
