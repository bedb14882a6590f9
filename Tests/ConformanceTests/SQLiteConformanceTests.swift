import AnyDefaultsSQLite
import AnyDefaultsTesting
import Testing

private let sqlite = BackendConformance(capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges]) { storage in
    try SQLiteProvider(path: storage.directory.appendingPathComponent("store.sqlite").path)
}

@Suite struct SQLiteConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try sqlite.plain.run(group) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try sqlite.cached.run(group) }
}
