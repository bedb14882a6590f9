import AnyDefaults
import Foundation
import PostgresNIO
import Testing
import TestSupport

/// The provider against the shared throwaway cluster: opening by store string, the replica,
/// namespaces, the schema, changes from other connections and processes, and the async writes.
@Suite(.ownThreads) struct PostgreSQLProviderTests {
    @Test func opensByStoreStringThroughTheStandardRegistry() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let cached = try ProviderRegistry.standard.makeProvider(cluster.storeString(namespace: namespace))
        #expect(cached is CachingProvider<PostgreSQLProvider>)
        try cached.setValue(.string("dark"), forKey: "ui.theme")
        // The libpq spelling, over TCP with the password from a file: another connection.
        try withTemporaryDirectory { directory in
            try Data("\(cluster.password)\n".utf8).write(to: directory.url.appendingPathComponent("pw"))
            let text = cluster.tcpStoreString(namespace: namespace, options: "&passwordfile=\(directory.path("pw"))&cache=off")
                .replacingOccurrences(of: "postgres://", with: "postgresql://")
            let plain = try #require(try ProviderRegistry.standard.makeProvider(text) as? PostgreSQLProvider)
            #expect(try plain.value(forKey: "ui.theme") == .string("dark"))
            #expect(plain.capabilities == [.persistent, .atomicBatch, .multiProcess, .externalChanges])
        }
    }

    @Test func theWrongPasswordAMissingDatabaseAndNoServerFailClearly() throws {
        let cluster = try PostgreSQLCluster.shared()
        let wrong = #expect(throws: DefaultsError.self) {
            try PostgreSQLProvider(url: cluster.tcpStoreString(namespace: "x", options: "&password=wrong"))
        }
        #expect(wrong?.code == .permissionDenied)
        #expect(wrong?.message.contains("wrong") == false, "the password must not appear: \(wrong?.message ?? "")")
        let missing = #expect(throws: DefaultsError.self) {
            try PostgreSQLProvider(url: cluster.storeString(namespace: "x").replacingOccurrences(of: "database=postgres", with: "database=nosuchdb"))
        }
        #expect(missing?.code == .notFound)
        // Nothing listens on the socket of another port: refused at once, not a hang.
        let clock = ContinuousClock()
        let start = clock.now
        let down = #expect(throws: DefaultsError.self) {
            try PostgreSQLProvider(url: "postgres:\(cluster.socketDirectory)?user=\(cluster.user)&port=1&namespace=x")
        }
        #expect(down?.code == .unavailable)
        #expect(clock.now - start < .seconds(30))
    }

    @Test func storeStringsParseIntoOptions() throws {
        let tcp = try PostgreSQLProvider.Options(
            StoreConfiguration(parsing: "postgres://app%40corp:s%3Acret@[::1]:6543/settings?namespace=t%201&sslmode=require&timeout=3"),
            environment: [:])
        #expect(tcp.server == .tcp(host: "::1", port: 6543))
        #expect(tcp.user == "app@corp")
        #expect(tcp.password == "s:cret")
        #expect(tcp.database == "settings")
        #expect(tcp.namespace == "t 1")
        #expect(tcp.tls == .require)
        #expect(tcp.timeout == .seconds(3))

        let socket = try PostgreSQLProvider.Options(
            StoreConfiguration(parsing: "postgres:/run/postgresql?user=me&database=db&port=5433"), environment: ["PGPASSWORD": "pw"])
        #expect(socket.server == .unixSocket(path: "/run/postgresql/.s.PGSQL.5433"))
        #expect(socket.password == "pw")
        #expect(socket.tls == .disable)
        #expect(socket.namespace == "default")

        let libpqSocket = try PostgreSQLProvider.Options(StoreConfiguration(parsing: "postgres://me@%2Frun%2Fpostgresql/db"), environment: [:])
        #expect(libpqSocket.server == .unixSocket(path: "/run/postgresql/.s.PGSQL.5432"))
        let defaults = try PostgreSQLProvider.Options(StoreConfiguration(parsing: "postgres://db.internal"), environment: ["PGUSER": "svc"])
        #expect(defaults.server == .tcp(host: "db.internal", port: 5432))
        #expect(defaults.user == "svc")
        #expect(defaults.database == nil)
        #expect(defaults.tls == .prefer)

        for (text, says) in [
            ("postgres://h?sslmode=maybe", "sslmode"), ("postgres://h:99999", "65535"), ("postgres://h:x", "not a number"),
            ("postgres://[::1", "IPv6"), ("postgres://h?namespace=", "namespace"), ("postgres://h?timeout=0", "timeout"),
        ] {
            #expect { try PostgreSQLProvider.Options(StoreConfiguration(parsing: text), environment: ["PGUSER": "u"]) } throws: {
                ($0 as? DefaultsError)?.code == .invalidConfiguration && ($0 as? DefaultsError)?.message.contains(says) == true
            }
        }
        #expect { try ProviderRegistry.standard.validate(StoreConfiguration(parsing: "postgres:")) } throws: {
            ($0 as? DefaultsError)?.message.contains("needs a server") == true
        }
    }

    @Test func namespacesAreIndependentStoresInOneDatabase() throws {
        let cluster = try PostgreSQLCluster.shared()
        let (a, b) = (freshNamespace("a"), freshNamespace("b"))
        let first = try PostgreSQLProvider(url: cluster.storeString(namespace: a))
        let second = try PostgreSQLProvider(url: cluster.storeString(namespace: b))
        let events = EventLog(second)
        try first.apply([.set("k", .int(1)), .set("only.a", .bool(true))])
        try second.setValue(.int(2), forKey: "k")
        try first.removeAll()
        #expect(try second.value(forKey: "k") == .int(2))
        #expect(try second.keys() == ["k"])
        #expect(try first.keys().isEmpty)
        #expect(events.all.map(\.key) == ["k"])
    }

    @Test func aDamagedRowIsCorruptedForItsKeyOnly() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let writer = try PostgreSQLProvider(url: cluster.storeString(namespace: namespace))
        try writer.apply([.set("good", .int(1)), .set("bad", .int(2))])
        try cluster.psql("UPDATE anydefaults_values SET value = '\\xff'::bytea WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = '\(namespace)') AND key = 'bad'::bytea")
        let reader = try openOverTCP(cluster, namespace: namespace)
        #expect(try reader.value(forKey: "good") == .int(1))
        let damaged = #expect(throws: DefaultsError.self) { try reader.value(forKey: "bad") }
        #expect(damaged?.code == .corrupted)
        #expect(damaged?.key == "bad")
        try reader.setValue(.int(3), forKey: "bad")
        #expect(try reader.value(forKey: "bad") == .int(3))
    }

    @Test func anotherConnectionsChangesArriveAsExternalEventsAndReachTheCache() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let here = try PostgreSQLProvider(url: cluster.storeString(namespace: namespace)).cached()
        let there = try openOverTCP(cluster, namespace: namespace)
        #expect(try here.value(forKey: "flag") == nil)   // the cache now holds the absence
        let events = EventLog(here)
        try there.apply([.set("flag", .bool(true)), .set("limit", .int(20))])
        try there.removeValue(forKey: "limit")
        // Commits read together come once per key: "limit" may come and go unseen.
        #expect(waitUntil { events.values(of: "flag") == [.bool(true)] && (events.values(of: "limit").isEmpty || events.values(of: "limit").last == .some(nil)) })
        #expect(events.all.allSatisfy { $0.origin == .external })
        #expect(try here.value(forKey: "flag") == .bool(true))
        #expect(try here.value(forKey: "limit") == nil)
    }

    @Test func anotherProcessWritesByStoreStringAndThisOneHearsIt() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let store = cluster.storeString(namespace: namespace)
        let here = try PostgreSQLProvider(url: store)
        let events = EventLog(here)
        let result = try ChildProcess.run("TestChild", ["apply", store, "a=1,b=2", "-a", "c=3"])
        #expect(result.status == 0, "\(result.standardError)")
        // Commits read together arrive once per key, in commit order (a key at its last change);
        // "a" may come and go unseen.
        #expect(waitUntil { events.values(of: "c") == [.int(3)] })
        #expect(events.values(of: "b") == [.int(2)])
        #expect(events.values(of: "a").last ?? nil == nil)
        #expect(events.all.filter { $0.key != "a" }.map(\.key) == ["b", "c"])
        #expect(events.all.allSatisfy { $0.origin == .external })
        #expect(try here.allValues() == ["b": .int(2), "c": .int(3)])

        // And the other way: a child that watches hears this process's writes.
        let (child, output, _) = try ChildProcess.start("TestChild", ["watch", store, "2"])
        let ready = output.fileHandleForReading.availableDataLine()
        #expect(ready == "ready")
        try here.apply([.set("x", .int(7)), .remove("b")])
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        // One commit's keys arrive in key order.
        #expect(printed.split(separator: "\n") == ["b=nil", "x=7"])
    }

    @Test func aSynchronousWriteRefusesToBlockAnEventLoop() throws {
        let cluster = try PostgreSQLCluster.shared()
        let store = try PostgreSQLProvider(url: cluster.storeString(namespace: freshNamespace()))
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let outcome = try loop.submit { () -> DefaultsError? in
            do throws(DefaultsError) {
                try store.setValue(.int(1), forKey: "k")
                return nil
            } catch {
                return error
            }
        }.wait()
        #expect(outcome?.code == .unsupported)
        #expect(try store.value(forKey: "k") == nil)
    }

    @Test func asyncWritesCommitAndReportLikeTheSynchronousOnes() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let store = try await PostgreSQLProvider.open(options: PostgreSQLProvider.Options(StoreConfiguration(parsing: cluster.storeString(namespace: namespace))))
        let events = EventLog(store)
        // Many at once from the cooperative pool: none blocks a thread while it waits.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask { try await store.setValueAsync(.int(Int64(index)), forKey: "k\(index)") }
            }
            try await group.waitForAll()
        }
        try await store.applyAsync([.set("batch", .bool(true)), .remove("k0")])
        try await store.removeValueAsync(forKey: "k1")
        #expect(try store.keys().count == 63)
        #expect(events.all.count == 67)
        #expect(events.all.allSatisfy { $0.origin == .local })
        let defaults = Defaults(store)
        try await defaults.async.set("dark", forKey: "theme")
        #expect(defaults.string(forKey: "theme") == "dark")
        try await store.removeAllAsync()
        let other = try openOverTCP(cluster, namespace: namespace)
        #expect(try other.keys().isEmpty)
    }

    @Test func refreshReadsWhatAnotherMachineJustWrote() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let here = try PostgreSQLProvider(url: cluster.storeString(namespace: namespace))
        let there = try openOverTCP(cluster, namespace: namespace)
        for index in 0..<20 {
            try there.setValue(.int(Int64(index)), forKey: "counter")
            try here.refresh()
            #expect(try here.value(forKey: "counter") == .int(Int64(index)))
        }
    }

    @Test func manyWritersOnSeveralConnectionsLoseNoUpdate() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let stores = [
            try PostgreSQLProvider(url: cluster.storeString(namespace: namespace)),
            try openOverTCP(cluster, namespace: namespace),
        ]
        DispatchQueue.concurrentPerform(iterations: 8) { writer in
            for index in 0..<25 {
                try? stores[writer % 2].setValue(.int(Int64(index)), forKey: "w\(writer).\(index)")
            }
        }
        for store in stores {
            try store.refresh()
            #expect(try store.keys().count == 200)
        }
        let count = try cluster.psql("SELECT count(*) FROM anydefaults_values WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = '\(namespace)') AND value IS NOT NULL")
        #expect(count.hasPrefix("200"))
    }
    /// `removeAll()` and `removeValue` on one connection while another writes keys for the first
    /// time: a removal sees the rows that existed when its statement began, so a key written
    /// meanwhile may stay (the removal first, then the write: what overlapping calls allow). What
    /// must hold whatever the timing: both replicas, the events each one reported, and a client
    /// that opens afterwards all agree with the server, and every key written after a removal
    /// returned is there.
    @Test func removalsRacingFirstWritesLeaveEveryClientAgreeingWithTheServer() throws {
        let cluster = try PostgreSQLCluster.shared()
        let namespace = freshNamespace()
        let remover = try PostgreSQLProvider(url: cluster.storeString(namespace: namespace))
        let writer = try openOverTCP(cluster, namespace: namespace)
        let heard = [EventLog(remover), EventLog(writer)]
        let rounds = 40
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            for round in 0..<rounds {
                if side == 0 {
                    try? round.isMultiple(of: 3) ? remover.removeValue(forKey: "r\(round).0") : remover.removeAll()
                } else {
                    for index in 0..<3 { try? writer.setValue(.int(Int64(round)), forKey: "r\(round).\(index)") }
                }
            }
        }
        try writer.setValue(.string("last"), forKey: "after")
        let rows = try cluster.psql(
            "SELECT convert_from(coalesce(full_key, key), 'UTF8') FROM anydefaults_values WHERE ns = (SELECT id FROM anydefaults_namespaces WHERE namespace = '\(namespace)') AND value IS NOT NULL")
        let server = Set(rows.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        #expect(server.contains("after"))
        for (store, events) in zip([remover, writer], heard) {
            try store.refresh()
            #expect(Set(try store.keys()) == server)
            // Replaying the events from an empty store gives what the server holds.
            func replayed() -> Set<String> {
                var keys: Set<String> = []
                for event in events.all { if event.newValue == nil { keys.remove(event.key) } else { keys.insert(event.key) } }
                return keys
            }
            #expect(waitUntil { replayed() == server }, "the events a replica reported add up to the server's keys")
        }
        #expect(Set(try openOverTCP(cluster, namespace: namespace).keys()) == server)
    }
}

extension FileHandle {
    /// Reads one line (without its newline), byte by byte, so that nothing after it is consumed.
    func availableDataLine() -> String {
        var bytes: [UInt8] = []
        while true {
            let data = readData(ofLength: 1)
            guard let byte = data.first, byte != UInt8(ascii: "\n") else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
