import AnyDefaultsMemory
import AnyDefaultsTesting
import Testing

private let memory = BackendConformance(store: "memory:", capabilities: InMemoryProvider().capabilities)

@Suite struct InMemoryConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try BackendConformance.note(memory.plain().run(group), "plain") }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try BackendConformance.note(memory.cached().run(group), "cached") }
}
