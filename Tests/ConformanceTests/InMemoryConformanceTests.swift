import AnyDefaultsMemory
import AnyDefaultsTesting
import Testing

private let suite = DefaultsConformanceSuite(capabilities: InMemoryProvider().capabilities) { _ in InMemoryProvider() }

@Suite struct InMemoryConformanceTests {
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
