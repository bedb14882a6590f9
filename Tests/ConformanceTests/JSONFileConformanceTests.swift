import AnyDefaultsTesting
import Testing

private let json = BackendConformance(store: "json:{dir}/settings.json", capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges])

@Suite struct JSONFileConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try BackendConformance.note(json.plain().run(group), "plain") }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try BackendConformance.note(json.cached().run(group), "cached") }
}
