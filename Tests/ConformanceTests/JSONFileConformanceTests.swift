import AnyDefaultsCore
import AnyDefaultsJSONFile
import AnyDefaultsTesting
import Testing

private func openJSONFile(_ storage: ConformanceStorage) throws -> JSONFileProvider {
    try JSONFileProvider(path: storage.directory.appendingPathComponent("settings.json").path)
}

private let capabilities: DefaultsCapabilities = [.persistent, .atomicBatch, .multiProcess, .externalChanges]

private let plain = DefaultsConformanceSuite(capabilities: capabilities) { try openJSONFile($0) }

@Suite struct JSONFileConformanceTests {
    @Test func roundTrips() throws { try plain.roundTrips() }
    @Test func typeFidelity() throws { try plain.typeFidelity() }
    @Test func keys() throws { try plain.keys() }
    @Test func removal() throws { try plain.removal() }
    @Test func batches() throws { try plain.batches() }
    @Test func persistence() throws { try plain.persistence() }
    @Test func concurrency() throws { try plain.concurrency() }
    @Test func changeEvents() throws { try plain.changeEvents() }
    @Test func errors() throws { try plain.errors() }
}

// The cached form; it sits here rather than in CachedConformanceTests.swift so that backends
// landing in parallel do not edit one file.
private let cached = DefaultsConformanceSuite(capabilities: capabilities) { try openJSONFile($0).cached() }

@Suite struct CachedJSONFileConformanceTests {
    @Test func roundTrips() throws { try cached.roundTrips() }
    @Test func typeFidelity() throws { try cached.typeFidelity() }
    @Test func keys() throws { try cached.keys() }
    @Test func removal() throws { try cached.removal() }
    @Test func batches() throws { try cached.batches() }
    @Test func persistence() throws { try cached.persistence() }
    @Test func concurrency() throws { try cached.concurrency() }
    @Test func changeEvents() throws { try cached.changeEvents() }
    @Test func errors() throws { try cached.errors() }
}
