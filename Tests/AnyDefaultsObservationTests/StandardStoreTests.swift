import AnyDefaults
import Foundation
import TestSupport
import Testing

/// The process-wide store is one global: these tests run one at a time, and only they touch it.
@Suite(.serialized) struct StandardStoreTests {
    /// A registry with `memory:` and a stand-in for the `userdefaults:` backend, which records
    /// the configurations it is asked to open.
    private func registry(withUserDefaults: Bool) -> (ProviderRegistry, Recorder<String>) {
        let registry = ProviderRegistry()
        registry.register(scheme: "memory", summary: "in memory", location: .none) { _ in AnyDefaultsMemory.MemoryProvider() }
        let opened = Recorder<String>()
        if withUserDefaults {
            registry.register(scheme: "userdefaults", summary: "stand-in", location: .optional("SUITE")) { configuration in
                opened.record(configuration.description)
                return AnyDefaultsMemory.MemoryProvider()
            }
        }
        return (registry, opened)
    }

    @Test func theEnvironmentChoosesTheStore() throws {
        let (registry, opened) = registry(withUserDefaults: true)
        let store = try Defaults.makeStandard(environment: ["ANYDEFAULTS_STORE": "memory:"], registry: registry)
        #expect(store.provider is CachingProvider<AnyDefaultsMemory.MemoryProvider>)
        #expect(opened.all.isEmpty)
    }

    @Test func aConfigurationFileChoosesTheStore() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("defaults.json")
            try Data(#"{"store": "userdefaults:com.example.app"}"#.utf8).write(to: URL(fileURLWithPath: file))
            let (registry, opened) = registry(withUserDefaults: true)
            _ = try Defaults.makeStandard(environment: ["ANYDEFAULTS_CONFIG": file], registry: registry)
            #expect(opened.all == ["userdefaults:com.example.app"])
        }
    }

    @Test func withoutConfigurationItIsUserDefaultsWhenAvailableElseMemory() throws {
        #expect(Defaults.standardFallbackStore() == "userdefaults:")     // the built-in backends
        let (withUserDefaults, opened) = registry(withUserDefaults: true)
        #expect(Defaults.standardFallbackStore(registry: withUserDefaults) == "userdefaults:")
        _ = try Defaults.makeStandard(environment: [:], registry: withUserDefaults)
        #expect(opened.all == ["userdefaults:"])

        let (memoryOnly, _) = registry(withUserDefaults: false)
        #expect(Defaults.standardFallbackStore(registry: memoryOnly) == "memory:")
        let store = try Defaults.makeStandard(environment: [:], registry: memoryOnly)
        #expect(!store.provider.capabilities.contains(.persistent))
    }

    @Test func previewsUseMemoryUnlessAStoreIsConfigured() throws {
        let (registry, opened) = registry(withUserDefaults: true)
        _ = try Defaults.makeStandard(environment: ["XCODE_RUNNING_FOR_PREVIEWS": "1"], registry: registry)
        #expect(opened.all.isEmpty)
        _ = try Defaults.makeStandard(
            environment: ["XCODE_RUNNING_FOR_PREVIEWS": "1", "ANYDEFAULTS_STORE": "userdefaults:suite"], registry: registry)
        #expect(opened.all == ["userdefaults:suite"])
    }

    @Test func aBadConfigurationIsAnError() {
        let error = #expect(throws: DefaultsError.self) {
            try Defaults.makeStandard(environment: ["ANYDEFAULTS_STORE": "nosuchscheme:x"])
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func developmentModeAndPropertiesWithoutAStore() {
        // Never opens the real standard store (the user's settings), and leaves an empty one.
        defer { Defaults.useInMemoryStandard() }

        let store = Defaults.useInMemoryStandard(["volume": 0.25])
        #expect(Defaults.standard === store)
        #expect(!store.provider.capabilities.contains(.persistent))

        let volume = Default(wrappedValue: 0.5, "volume")
        let nickname = Default<String?>("nickname")
        let theme = Default(.theme)
        #expect(volume.store === store)
        #expect(volume.wrappedValue == 0.25)
        nickname.wrappedValue = "ada"
        theme.wrappedValue = .dark
        #expect(store.string(forKey: "nickname") == "ada")
        #expect(store[.theme] == .dark)

        let settings = PlayerSettings(prefix: "player.")
        settings.volume = 0.9
        #expect(store.double(forKey: "player.volume") == 0.9)

        let replacement = Defaults(AnyDefaultsMemory.MemoryProvider())
        Defaults.standard = replacement
        #expect(Defaults.standard === replacement)
        #expect(Default(wrappedValue: 0.5, "volume").store === replacement)   // new properties use the new store
    }
}
