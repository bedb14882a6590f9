import AnyDefaultsCore
import AnyDefaultsLMDB
import AnyDefaultsTesting
import Testing

private let suite = DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch, .multiProcess]) { storage in
    try LMDBProvider(path: storage.directory.appendingPathComponent("store").path)
}

@Suite struct LMDBConformanceTests {
    @Test func roundTrips() throws { try suite.roundTrips() }
    @Test func typeFidelity() throws { try suite.typeFidelity() }
    @Test func keys() throws { try suite.keys() }
    @Test func removal() throws { try suite.removal() }
    @Test func batches() throws { try suite.batches() }
    @Test func persistence() throws { try suite.persistence() }
    @Test func concurrency() throws { try suite.concurrency() }
    @Test func changeEvents() throws { try suite.changeEvents() }
    @Test func errors() throws { try suite.errors() }
}

private let cachedSuite = DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch, .multiProcess]) { storage in
    try LMDBProvider(path: storage.directory.appendingPathComponent("store").path).cached()
}

@Suite struct CachedLMDBConformanceTests {
    @Test func roundTrips() throws { try cachedSuite.roundTrips() }
    @Test func typeFidelity() throws { try cachedSuite.typeFidelity() }
    @Test func keys() throws { try cachedSuite.keys() }
    @Test func removal() throws { try cachedSuite.removal() }
    @Test func batches() throws { try cachedSuite.batches() }
    @Test func persistence() throws { try cachedSuite.persistence() }
    @Test func concurrency() throws { try cachedSuite.concurrency() }
    @Test func changeEvents() throws { try cachedSuite.changeEvents() }
    @Test func errors() throws { try cachedSuite.errors() }
}
