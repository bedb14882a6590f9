import AnyDefaults
import Foundation
import Testing
import TestSupport

/// One word per idea across the backends' store strings (Docs/Configuration.md), with the older
/// spellings still opening the same store the same way.
@Suite struct StoreOptionVocabularyTests {
    @Test(arguments: ["json", "userdefaults", "sqlite", "lmdb"])
    func everyLocalBackendTakesLockTimeout(scheme: String) throws {
        try withTemporaryDirectory { directory in
            let location = scheme == "userdefaults" ? "vocabulary-\(UUID().uuidString)" : "\(directory.path)/store"
            let store = try ProviderRegistry.standard.makeProvider("\(scheme):\(location)?locktimeout=3&cache=off")
            try store.setValue(.int(1), forKey: "k")
            #expect(try store.value(forKey: "k") == .int(1))
            if scheme == "userdefaults" { try store.removeAll() }
            #expect { try ProviderRegistry.standard.makeProvider("\(scheme):\(location)?locktimeout=soon&cache=off") } throws: {
                ($0 as? DefaultsError)?.message.contains("locktimeout=soon") == true
            }
        }
    }

    @Test func recoveryIsOneOptionWithTheOlderSpellingOfUserDefaultsKept() throws {
        let suite = "vocabulary-\(UUID().uuidString)"
        let cases: [(String, Bool)] = [
            ("recovery=moveaside", true), ("recovery=fail", false), ("recover=on", true), ("recover=off", false), ("", false),
        ]
        for (option, expected) in cases {
            let store = try ProviderRegistry.standard.makeProvider("userdefaults:\(suite)?cache=off&\(option)")
            let provider = try #require(store as? UserDefaultsProvider)
            #expect(provider.options.recoverCorruptedFile == expected, "\(option)")
        }
        try withTemporaryDirectory { directory in
            let store = try ProviderRegistry.standard.makeProvider("json:\(directory.path)/p.json?recovery=moveaside&cache=off")
            #expect((store as? JSONFileProvider)?.options.corruptionPolicy == .moveAside)
        }
    }

    @Test func durabilityFullMeansASyncPerCommitOnSQLiteAndLMDB() throws {
        try withTemporaryDirectory { directory in
            for (word, expected) in [("full", SQLiteProvider.Durability.full), ("synced", .full), ("normal", .normal)] {
                let store = try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/\(word).sqlite?durability=\(word)&cache=off")
                #expect((store as? SQLiteProvider)?.durability == expected, "sqlite durability=\(word)")
            }
            for (word, expected) in [("full", LMDBProvider.Options.Durability.synced), ("synced", .synced), ("nosync", .noSync), ("mapped", .mapped)] {
                let store = try ProviderRegistry.standard.makeProvider("lmdb:\(directory.path)/\(word)?durability=\(word)&cache=off")
                #expect((store as? LMDBProvider)?.options.durability == expected, "lmdb durability=\(word)")
            }
        }
    }

    @Test func anAliasIsReadAsItsOptionAndBothSpellingsAtOnceAreRefused() throws {
        try withTemporaryDirectory { directory in
            let old = try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/a.sqlite?busytimeout=1&cache=off")
            try old.setValue(.int(1), forKey: "k")
            #expect((old as? SQLiteProvider)?.options.lockTimeout == .seconds(1))
            let new = try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/a.sqlite?locktimeout=2&cache=off")
            #expect((new as? SQLiteProvider)?.options.lockTimeout == .seconds(2))
            #expect { try ProviderRegistry.standard.makeProvider("sqlite:\(directory.path)/b.sqlite?busytimeout=1&locktimeout=2") } throws: {
                let message = ($0 as? DefaultsError)?.message ?? ""
                return message.contains("locktimeout=") && message.contains("busytimeout=")
            }
            #expect { try ProviderRegistry.standard.makeProvider("userdefaults:x?recover=on&recovery=fail") } throws: {
                ($0 as? DefaultsError)?.message.contains("two spellings of one option") == true
            }
            // An alias belongs to its backend: json: never had busytimeout.
            #expect { try ProviderRegistry.standard.makeProvider("json:\(directory.path)/c.json?busytimeout=1") } throws: {
                ($0 as? DefaultsError)?.message.contains("has no option \"busytimeout\"") == true
            }
        }
    }

    @Test func eachBackendRegistersItsOwnScheme() throws {
        let registry = ProviderRegistry()
        SQLiteProvider.register(in: registry)
        #expect(registry.registered.map(\.scheme) == ["sqlite"])
        #expect { try registry.makeProvider("memory:") } throws: { ($0 as? DefaultsError)?.code == .invalidConfiguration }
        MemoryProvider.register(in: registry)
        LMDBProvider.register(in: registry)
        JSONFileProvider.register(in: registry)
        UserDefaultsProvider.register(in: registry)
        PostgreSQLProvider.register(in: registry)
        let everything = ProviderRegistry()
        everything.registerBuiltInBackends()
        #expect(registry.registered.map(\.scheme) == everything.registered.map(\.scheme))
        #expect(registry.registered.map(\.options) == everything.registered.map(\.options))
    }
}
