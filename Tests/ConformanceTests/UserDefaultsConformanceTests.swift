import AnyDefaultsCore
import AnyDefaultsTesting
import AnyDefaultsUserDefaults
import Testing

/// Each group runs on a uniquely named suite in this process's real preferences directory; the
/// cleanup deletes the suite (its file, on Linux), so no settings are left behind.
private let suite = DefaultsConformanceSuite(
    capabilities: UserDefaultsProvider.supportedCapabilities,
    cleanup: { storage in try UserDefaultsProvider.removeSuite(named: storage.identifier) },
    open: { storage in try UserDefaultsProvider(suiteName: storage.identifier) }
)

@Suite struct UserDefaultsConformanceTests {
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

/// The same, through the cache: `UserDefaultsProvider(...).cached()`.
private let cachedSuite = DefaultsConformanceSuite(
    capabilities: UserDefaultsProvider.supportedCapabilities,
    cleanup: { storage in try UserDefaultsProvider.removeSuite(named: storage.identifier) },
    open: { storage in try UserDefaultsProvider(suiteName: storage.identifier).cached() }
)

@Suite struct CachedUserDefaultsConformanceTests {
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
