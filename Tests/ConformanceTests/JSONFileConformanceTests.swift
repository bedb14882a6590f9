import AnyDefaultsJSONFile
import AnyDefaultsTesting
import Testing

private let json = BackendConformance(capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges]) { storage in
    try JSONFileProvider(path: storage.directory.appendingPathComponent("settings.json").path)
}

@Suite struct JSONFileConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) throws { try json.plain.run(group) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) throws { try json.cached.run(group) }
}
