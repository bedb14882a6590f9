import AnyDefaultsCore
import AnyDefaultsMemory
import AnyDefaultsTesting
import Testing

// The conformance suite on the cached form of each backend: a CachingProvider must keep the
// contract of the provider it wraps. Other backends' cached runs join this file as they land.

private let cachedInMemory = DefaultsConformanceSuite(capabilities: InMemoryProvider().cached().capabilities) { _ in
    InMemoryProvider().cached()
}

@Suite struct CachedInMemoryConformanceTests {
    @Test func roundTrips() throws { try cachedInMemory.roundTrips() }
    @Test func typeFidelity() throws { try cachedInMemory.typeFidelity() }
    @Test func keys() throws { try cachedInMemory.keys() }
    @Test func removal() throws { try cachedInMemory.removal() }
    @Test func batches() throws { try cachedInMemory.batches() }
    @Test func persistence() throws { try cachedInMemory.persistence() }
    @Test func concurrency() throws { try cachedInMemory.concurrency() }
    @Test func changeEvents() throws { try cachedInMemory.changeEvents() }
    @Test func errors() throws { try cachedInMemory.errors() }
}
