import AnyDefaults
import Configuration
import Foundation
import Testing
import TestSupport

@Suite struct StandardRegistryTests {
    @Test func opensTheInMemoryBackendByConfiguration() throws {
        let store = try ProviderRegistry.standard.makeProvider("memory:?cache=off")
        #expect(store is AnyDefaultsMemory.MemoryProvider)
        try store.setValue(.int(1), forKey: "k")
        #expect(try store.value(forKey: "k") == .int(1))
    }

    @Test func cacheIsOnByDefaultAndOffOnRequest() throws {
        #expect(try ProviderRegistry.standard.makeProvider("memory:") is CachingProvider<AnyDefaultsMemory.MemoryProvider>)
        #expect(try ProviderRegistry.standard.makeProvider("memory:?cache=off") is AnyDefaultsMemory.MemoryProvider)
    }

    @Test func everyBuiltInSchemeIsRegistered() {
        let schemes = Set(ProviderRegistry.standard.registered.map { $0.scheme })
        #expect(schemes == ["memory", "json", "userdefaults", "sqlite", "lmdb", "postgres", "postgresql"])
    }

    @Test func opensAJSONFileWithItsOptionsAndRejectsUnknownOnes() throws {
        try withTemporaryDirectory { directory in
            let store = try ProviderRegistry.standard.makeProvider("json:\(directory.path)/sub/prefs.json?recovery=moveaside&locktimeout=2&watch=off&cache=off")
            let provider = try #require(store as? JSONFileProvider)
            #expect(provider.options.corruptionPolicy == .moveAside)
            #expect(provider.options.lockTimeout == .seconds(2))
            #expect(!provider.options.watchesExternalChanges)
            try provider.setValue(.string("v"), forKey: "k")
            #expect(FileManager.default.fileExists(atPath: "\(directory.path)/sub/prefs.json"))

            #expect { try ProviderRegistry.standard.makeProvider("json:\(directory.path)/p.json?recovery=pray") } throws: {
                ($0 as? DefaultsError)?.message.contains("use one of fail, moveaside") == true
            }
            #expect { try ProviderRegistry.standard.makeProvider("json:\(directory.path)/p.json?colour=red") } throws: {
                ($0 as? DefaultsError)?.message.contains("Accepted: recovery=fail|moveaside, locktimeout=seconds, watch=on|off, cache=on|off") == true
            }
        }
    }

    @Test func opensSQLiteWithItsOptions() throws {
        try withTemporaryDirectory { directory in
            let store = try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/p.sqlite?durability=full&busytimeout=1")
            try store.setValue(.int(7), forKey: "k")
            let reopened = try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/p.sqlite?cache=off")
            #expect(reopened is SQLiteProvider)
            #expect(try reopened.value(forKey: "k") == .int(7))
            #expect { try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/q.sqlite?durability=extra") } throws: {
                ($0 as? DefaultsError)?.message.contains("use one of full, normal") == true
            }
        }
    }

    @Test func opensLMDBWithItsOptions() throws {
        try withTemporaryDirectory { directory in
            let store = try ProviderRegistry.standard.makeProvider("lmdb:\(directory.path)/env?mapsize=1MiB&maxsize=64MiB&durability=nosync&cache=off")
            let provider = try #require(store as? LMDBProvider)
            try provider.setValue(.data(Data(count: 2 << 20)), forKey: "big")  // beyond the initial map: it grows
            #expect(try provider.value(forKey: "big") == .data(Data(count: 2 << 20)))
            #expect { try ProviderRegistry.standard.makeProvider("lmdb:\(directory.path)/other?mapsize=lots") } throws: {
                ($0 as? DefaultsError)?.message.contains("64MiB") == true
            }
        }
    }

    @Test func readsTheStoreFromSwiftConfiguration() throws {
        let config = ConfigReader(provider: Configuration.InMemoryProvider(values: ["anydefaults.store": "json:/tmp/x.json?cache=off"]))
        let configuration = try #require(try StoreConfiguration(reading: config.scoped(to: "anydefaults")))
        #expect(configuration.scheme == "json")
        #expect(configuration.location == "/tmp/x.json")
        #expect(configuration.cache == false)

        let structured = ConfigReader(provider: Configuration.InMemoryProvider(values: [
            "app.settings.scheme": "sqlite", "app.settings.location": "~/p.sqlite", "app.settings.cache": "off",
        ]))
        let parts = try #require(try StoreConfiguration(reading: structured.scoped(to: ["app", "settings"])))
        #expect(parts.scheme == "sqlite")
        #expect(parts.location == "~/p.sqlite")
        #expect(parts.cache == false)

        let empty = ConfigReader(provider: Configuration.InMemoryProvider(values: [:]))
        #expect(try StoreConfiguration(reading: empty) == nil)

        let bad = ConfigReader(provider: Configuration.InMemoryProvider(values: ["store": "no scheme here"]))
        #expect(throws: DefaultsError.self) { try StoreConfiguration(reading: bad) }
    }
}
