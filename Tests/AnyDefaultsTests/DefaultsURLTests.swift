import AnyDefaults
import Foundation
import Testing
import TestSupport

/// `Defaults(url:)`: the store chosen by one string, cached as the string says.
@Suite struct DefaultsURLTests {
    @Test func aStoreStringOpensItsBackendCachedUnlessItSaysOff() throws {
        #expect(try Defaults(url: "memory:").provider is CachingProvider<AnyDefaultsMemory.MemoryProvider>)
        #expect(try Defaults(url: "memory:?cache=off").provider is AnyDefaultsMemory.MemoryProvider)
        #expect(try Defaults(configuration: StoreConfiguration(parsing: "memory:?cache=off")).provider is AnyDefaultsMemory.MemoryProvider)
    }

    @Test func aStoreURLOpensAFileStoreThatPersists() throws {
        try withTemporaryDirectory { directory in
            let url = try #require(URL(string: "sqlite://\(directory.path("settings.sqlite"))"))
            do {
                let defaults = try Defaults(url: url)
                defaults.set(42, forKey: "answer")
            }
            #expect(FileManager.default.fileExists(atPath: directory.path("settings.sqlite")))
            #expect(try Defaults(url: "sqlite:\(directory.path("settings.sqlite"))?cache=off").integer(forKey: "answer") == 42)
        }
    }

    @Test func aBadStringIsAConfigurationError() {
        #expect { try Defaults(url: "redis:localhost") } throws: {
            ($0 as? DefaultsError)?.code == .invalidConfiguration
        }
        #expect { try Defaults(url: "json:/tmp/x.json?colour=red") } throws: {
            ($0 as? DefaultsError)?.code == .invalidConfiguration
        }
    }

    @Test func theStandardStoreHonoursCacheOff() throws {
        let defaults = try Defaults.makeStandard(environment: ["ANYDEFAULTS_STORE": "memory:?cache=off"])
        #expect(defaults.provider is AnyDefaultsMemory.MemoryProvider)
        #expect(try Defaults.makeStandard(environment: ["ANYDEFAULTS_STORE": "memory:"]).provider is CachingProvider<AnyDefaultsMemory.MemoryProvider>)
    }
}
