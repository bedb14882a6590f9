import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// Failures of the connection and the server, each on a cluster of its own (they would disturb
/// the other tests): no change is lost across a killed connection or a server restart, reads go
/// on from the replica while the server is away, and writes fail clearly instead of hanging.
@Suite(.ownThreads, .serialized) struct PostgreSQLReconnectionTests {
    /// Writes `count` distinct keys through `writer`, retrying each until it commits (a write
    /// whose connection died may or may not have committed; writing the same value again is
    /// harmless), and calls `disrupt` once a third of them are written.
    private func write(_ count: Int, through writer: PostgreSQLProvider, disrupt: () throws -> Void) throws -> Int {
        var failures = 0
        for index in 0..<count {
            if index == count / 3 { try disrupt() }
            while true {
                do {
                    try writer.setValue(.int(Int64(index)), forKey: "k\(index)")
                    break
                } catch {
                    #expect([.unavailable, .ioFailure].contains(error.code), "\(error)")
                    failures += 1
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
        }
        return failures
    }

    /// Every key written is heard by the listener, with its value, exactly as written, and is in
    /// its replica.
    private func expectNothingLost(_ events: EventLog, _ listener: PostgreSQLProvider, count: Int) throws {
        let keys = { Set(events.all.map(\.key).filter { $0.hasPrefix("k") }) }
        let heard = waitUntil(within: .seconds(30)) { keys().count == count }
        let missing = (0..<count).map { "k\($0)" }.filter { !keys().contains($0) }
        #expect(heard, "lost \(missing.count) change(s): \(missing.prefix(10))")
        for index in 0..<count {
            #expect(events.values(of: "k\(index)").last == .int(Int64(index)))
        }
        #expect(try listener.allValues().filter { $0.key.hasPrefix("k") }.count == count)
    }

    /// A listener that only a catch-up after reconnecting can save: it logs in as a role of its
    /// own, which the tests lock out (`NOLOGIN`) while others write, and its heartbeat is an hour
    /// away. What is written while it cannot reconnect reaches it only by reading, once it is back,
    /// the rows written after its revision: no later write announces them.
    private func listener(_ cluster: PostgreSQLCluster, namespace: String) throws -> PostgreSQLProvider {
        try cluster.psql("CREATE ROLE listener LOGIN; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO listener")
        var options = try PostgreSQLProvider.Options(
            StoreConfiguration(parsing: cluster.storeString(namespace: namespace, options: "&applicationname=listener")))
        options.user = "listener"
        options.heartbeat = .seconds(3600)
        return try PostgreSQLProvider(options: options)
    }

    private func lockOut(_ cluster: PostgreSQLCluster, _ locked: Bool) throws {
        try cluster.psql("ALTER ROLE listener \(locked ? "NOLOGIN" : "LOGIN")")
    }

    @Test func noChangeIsLostWhenTheListeningConnectionIsTerminated() throws {
        let cluster = try PostgreSQLCluster(purpose: "terminate")
        defer { cluster.stop() }
        let namespace = freshNamespace()
        let writer = try openOverTCP(cluster, namespace: namespace)   // creates the tables
        let listener = try listener(cluster, namespace: namespace)
        let events = EventLog(listener)
        var terminated: [Int] = []
        let failures = try write(200, through: writer) {
            // pg_terminate_backend on the listener's connection, once while it may come back at
            // once, then while it cannot log in until the writes are done.
            terminated.append(try cluster.terminateConnections(of: "listener"))
            #expect(waitUntil { (try? cluster.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'listener'")) == "1\n" })
            try lockOut(cluster, true)
            terminated.append(try cluster.terminateConnections(of: "listener"))
        }
        try lockOut(cluster, false)
        #expect(failures == 0, "the writer's connection was not touched")
        #expect(terminated == [1, 1])
        try expectNothingLost(events, listener, count: 200)
    }

    @Test func noChangeIsLostAcrossAServerRestart() throws {
        let cluster = try PostgreSQLCluster(purpose: "restart")
        defer { cluster.stop() }
        let namespace = freshNamespace()
        let writer = try openOverTCP(cluster, namespace: namespace)
        let listener = try listener(cluster, namespace: namespace)
        let events = EventLog(listener)
        let failures = try write(200, through: writer) {
            // The listener stays out after the restart until the writes are done.
            try lockOut(cluster, true)
            try cluster.restart(downFor: .milliseconds(300))
        }
        try lockOut(cluster, false)
        // Whether a write fails depends on whether the writer reconnected before its next write
        // (it did, in 1 of several CI runs under load); the listener, locked out across the restart,
        // must catch up either way, which is what this test is about.
        _ = failures
        try expectNothingLost(events, listener, count: 200)
    }

    @Test func whileTheServerIsDownReadsServeTheReplicaAndWritesFailAtOnce() throws {
        let cluster = try PostgreSQLCluster(purpose: "down")
        defer { cluster.stop() }
        let namespace = freshNamespace()
        let store = try PostgreSQLProvider(url: cluster.storeString(namespace: namespace, options: "&timeout=2"))
        try store.apply([.set("a", .int(1)), .set("b", .string("x"))])
        try cluster.stopServerOnly()
        #expect(try store.value(forKey: "a") == .int(1))
        #expect(try store.allValues() == ["a": .int(1), "b": .string("x")])
        let clock = ContinuousClock()
        var codes: [DefaultsError.Code] = []
        let start = clock.now
        for _ in 0..<3 {
            do {
                try store.setValue(.int(2), forKey: "a")
            } catch {
                codes.append(error.code)
                #expect(error.message.contains("nothing was written") || error.message.contains("may or may not"), "\(error.message)")
            }
        }
        // The first write may meet the dying connection (unknown outcome); then the store knows
        // it is disconnected and says so at once.
        #expect(codes.count == 3)
        #expect(codes.last == .unavailable)
        #expect(clock.now - start < .seconds(10))
        #expect(try store.value(forKey: "a") == .int(1))

        try cluster.startServerOnly()
        #expect(waitUntil(within: .seconds(20)) { (try? store.setValue(.int(3), forKey: "a")) != nil })
        #expect(try store.value(forKey: "a") == .int(3))
    }
}
