import AnyDefaults
import Configuration
import Testing

/// A file that imports AnyDefaults and swift-configuration names both libraries' in-memory
/// providers without qualification: ours is `MemoryProvider`, theirs `InMemoryProvider`. (This
/// file compiling is half the test.)
@Suite struct NameClashTests {
    @Test func bothInMemoryProvidersAreNamedPlainly() throws {
        let settings = MemoryProvider(["volume": .double(0.5)])
        let configuration = ConfigReader(provider: InMemoryProvider(values: ["anydefaults.store": "memory:"]))
        #expect(try settings.value(forKey: "volume") == .double(0.5))
        #expect(configuration.string(forKey: "anydefaults.store") == "memory:")
    }
}
