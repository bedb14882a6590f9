import AnyDefaults
import Configuration
import Foundation
import Synchronization
import Testing
import TestSupport

/// The swift-configuration provider over in-memory, SQLite and PostgreSQL stores: reads through `ConfigReader` convert where nothing is lost, and
/// watching sees every change, also another process's.
@Suite struct DefaultsConfigProviderTests {
    @Test func readsThroughAConfigReaderWithLosslessConversions() throws {
        let store = MemoryProvider([
            "http.port": .int(8080), "http.host": .string("0.0.0.0"), "ratio": .int(2), "whole": .double(3),
            "flag": .int(1), "text.port": .string("9090"), "text.on": .string("yes"), "tags": .array([.string("a"), .string("b")]),
            "limits": .array([.int(1), .double(2)]), "blob": .data(Data([1, 2])), "half": .double(0.5), "token": .string("s3cret"),
        ])
        let provider = DefaultsConfigProvider(store, secretKeys: ["token"])
        let config = ConfigReader(provider: provider)
        #expect(config.int(forKey: "http.port") == 8080)
        #expect(config.string(forKey: "http.host") == "0.0.0.0")
        #expect(config.double(forKey: "ratio") == 2.0)
        #expect(config.int(forKey: "whole") == 3)
        #expect(config.bool(forKey: "flag") == true)
        #expect(config.int(forKey: "text.port") == 9090)
        #expect(config.bool(forKey: "text.on") == true)
        #expect(config.stringArray(forKey: "tags") == ["a", "b"])
        #expect(config.intArray(forKey: "limits") == [1, 2])
        #expect(config.bytes(forKey: "blob") == [1, 2])
        #expect(config.int(forKey: "missing", default: 7) == 7)
        // Lossy or meaningless conversions are errors, not guesses.
        #expect(throws: DefaultsError.self) { try provider.value(forKey: AbsoluteConfigKey(["half"]), type: .int) }
        #expect(throws: DefaultsError.self) { try provider.value(forKey: AbsoluteConfigKey(["http", "port"]), type: .string) }
        #expect(try provider.value(forKey: AbsoluteConfigKey(["token"]), type: .string).value?.isSecret == true)
        #expect(try provider.value(forKey: AbsoluteConfigKey(["http", "host"]), type: .string).value?.isSecret == false)
        // A scope and a separator of one's own.
        let scoped = DefaultsConfigProvider(Defaults(store).scoped("http."), separator: "/")
        #expect(try scoped.value(forKey: AbsoluteConfigKey(["port"]), type: .int).value?.content == .int(8080))
        #expect(try scoped.snapshot().value(forKey: AbsoluteConfigKey(["host"]), type: .string).value?.content == .string("0.0.0.0"))
    }

    @Test func watchingAnInMemoryStoreSeesEveryChange() async throws {
        let store = MemoryProvider(["level": .int(1)])
        try await expectLiveUpdates(DefaultsConfigProvider(store)) { value in
            if let value { try store.setValue(.int(Int64(value)), forKey: "level") } else { try store.removeValue(forKey: "level") }
        }
    }

    @Test func watchingASQLiteStoreSeesAnotherProcessesChanges() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("settings.sqlite")
        let store = try SQLiteProvider(path: path)
        try store.setValue(.int(1), forKey: "level")
        try await expectLiveUpdates(DefaultsConfigProvider(store)) { value in
            let change = value.map { "level=\($0)" } ?? "-level"
            let result = try ChildProcess.run("TestChild", ["apply", "sqlite:" + path, change])
            #expect(result.status == 0, "\(result.standardError)")
        }
    }

    /// A server reading its settings from PostgreSQL (the shared test cluster): another machine
    /// (another connection) changes them, and the watch sees each change live.
    @Test func watchingAPostgreSQLStoreSeesAnotherMachinesChanges() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = "config-\(UUID().uuidString.prefix(8))"
        let store = try ProviderRegistry.standard.makeProvider(cluster.storeString(namespace: namespace))
        let admin = try PostgreSQLProvider(url: cluster.tcpStoreString(namespace: namespace, options: "&password=\(cluster.password)"))
        try admin.apply([.set("level", .int(1)), .set("http.port", .int(8080))])
        try #require(store as? CachingProvider<PostgreSQLProvider>).upstream.refresh()
        let provider = DefaultsConfigProvider(store)
        #expect(ConfigReader(provider: provider).int(forKey: "http.port") == 8080)
        try await expectLiveUpdates(provider) { value in
            if let value { try admin.setValue(.int(Int64(value)), forKey: "level") } else { try admin.removeValue(forKey: "level") }
        }
    }
}

/// Watches `level` through a `ConfigReader` over `provider`, which holds 1, while `change` sets
/// it to 2, 3, then removes it (`nil`); expects to see 1, 2, 3 and then the default, 0.
func expectLiveUpdates(_ provider: DefaultsConfigProvider, change: @escaping @Sendable (Int?) throws -> Void) async throws {
    let config = ConfigReader(provider: provider)
    let seen = Mutex<[Int]>([])
    try await config.watchInt(forKey: "level", default: 0) { updates in
        var steps: [Int?] = [2, 3, nil]
        for await level in updates {
            seen.withLock { $0.append(level) }
            guard !steps.isEmpty else { break }
            try change(steps.removeFirst())
        }
    }
    #expect(seen.withLock { $0 } == [1, 2, 3, 0])
    // A snapshot watch starts with the current state too.
    let first = try await provider.watchSnapshot { updates in
        for await snapshot in updates { return try snapshot.value(forKey: AbsoluteConfigKey(["level"]), type: .int).value }
        return nil
    }
    #expect(first == nil)
}
