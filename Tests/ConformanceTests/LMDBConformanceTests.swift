import AnyDefaultsLMDB
import AnyDefaultsTesting
import Testing

private let lmdb = BackendConformance(capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges]) { storage in
    try LMDBProvider(path: storage.directory.appendingPathComponent("store").path)
}

@Suite struct LMDBConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try lmdb.plain.run(group) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try lmdb.cached.run(group) }
}
