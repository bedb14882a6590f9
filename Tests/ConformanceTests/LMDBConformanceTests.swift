import AnyDefaultsTesting
import Testing

private let lmdb = BackendConformance(store: "lmdb:{dir}/store", capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges])

@Suite struct LMDBConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try BackendConformance.note(lmdb.plain().run(group), "plain") }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try BackendConformance.note(lmdb.cached().run(group), "cached") }
}
