import AnyDefaults
import Foundation
import Testing
import TestSupport

/// TLS against a real server: one cluster with `ssl=on` (its certificate names `localhost` only,
/// signed by a throwaway authority) for every test here, and the shared cluster without TLS.
/// Every connection logs in over TCP with the cluster's scram-sha-256 password.
@Suite(.ownThreads) struct PostgreSQLTLSTests {
    private static let untrusted = "TLS: the server's certificate is not signed by a trusted authority"

    /// A store string over TCP to `host` on `cluster`, with the password and `options`; the
    /// connection's application name is returned with it, to find it in `pg_stat_ssl`.
    private func store(
        _ cluster: PostgreSQLCluster, host: String, namespace: String = freshNamespace("tls"), _ options: String
    ) -> (url: String, application: String) {
        let application = "tls-\(UUID().uuidString.prefix(8))"
        let url = "postgres://\(cluster.user)@\(host):\(cluster.port)/postgres?namespace=\(namespace)"
            + "&password=\(cluster.password)&applicationname=\(application)&connecttimeout=5&timeout=5" + options
        return (url, application)
    }

    /// Whether the server sees the connection of `application` as encrypted (`pg_stat_ssl`).
    private func isEncrypted(_ cluster: PostgreSQLCluster, _ application: String) throws -> Bool {
        let answer = try cluster.psql(
            "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '\(application)'")
        return answer.trimmingCharacters(in: .whitespacesAndNewlines) == "t"
    }

    /// Opening `url` fails; returns the error.
    private func openingFails(_ url: String) -> DefaultsError? {
        do {
            let provider = try PostgreSQLProvider(url: url)
            provider.close()
            return nil
        } catch {
            return error
        }
    }

    /// What a refused TLS connection must say: the backend, a failure to connect (not the
    /// provider's own wait running out: a refused certificate fails the handshake at once), and
    /// a cause that says what about TLS failed. The password never appears.
    private func expectTLSRefusal(_ error: DefaultsError?, _ cluster: PostgreSQLCluster, _ about: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error else {
            Issue.record("the connection was accepted", sourceLocation: sourceLocation)
            return
        }
        let text = "\(error)"
        #expect(error.backend == "PostgreSQL", sourceLocation: sourceLocation)
        #expect(error.code == .unavailable, "\(text)", sourceLocation: sourceLocation)
        #expect(error.message.contains("Connecting to"), "\(text)", sourceLocation: sourceLocation)
        #expect(!error.message.contains("no answer"), "\(text)", sourceLocation: sourceLocation)
        #expect(error.message.contains(about), "\(text)", sourceLocation: sourceLocation)
        #expect(error.cause is PostgreSQLFailure, "\(text)", sourceLocation: sourceLocation)
        #expect(!text.contains(cluster.password), sourceLocation: sourceLocation)
    }

    @Test func requireEncryptsAndReadsAndWrites() throws {
        let cluster = try PostgreSQLCluster.sharedWithTLS()
        let namespace = freshNamespace()
        let (url, application) = store(cluster, host: "127.0.0.1", namespace: namespace, "&sslmode=require")
        let writer = try PostgreSQLProvider(url: url)
        defer { writer.close() }
        try writer.apply([.set("a", .int(1)), .set("b", .data(Data([0, 1, 2])))])
        #expect(try isEncrypted(cluster, application))
        // Another connection (another application name) reads it back from the server.
        let (readerURL, readerApplication) = store(cluster, host: "127.0.0.1", namespace: namespace, "&sslmode=require")
        let reader = try PostgreSQLProvider(url: readerURL)
        defer { reader.close() }
        #expect(try reader.allValues() == ["a": .int(1), "b": .data(Data([0, 1, 2]))])
        #expect(try isEncrypted(cluster, readerApplication))
    }

    @Test func verifyFullWithTheRightAuthorityAndHostNameConnects() throws {
        let cluster = try PostgreSQLCluster.sharedWithTLS()
        let authority = try #require(cluster.certificateAuthorityFile)
        let (url, application) = store(cluster, host: "localhost", "&sslmode=verify-full&sslrootcert=\(authority)")
        let provider = try PostgreSQLProvider(url: url)
        defer { provider.close() }
        try provider.setValue(.string("over TLS"), forKey: "k")
        try provider.refresh()
        #expect(try provider.value(forKey: "k") == .string("over TLS"))
        #expect(try isEncrypted(cluster, application))
    }

    @Test func verifyCAChecksTheAuthorityButNotTheHostName() throws {
        let cluster = try PostgreSQLCluster.sharedWithTLS()
        let authority = try #require(cluster.certificateAuthorityFile)
        let other = try #require(cluster.otherCertificateAuthorityFile)
        // The certificate names localhost, not 127.0.0.1: verify-ca accepts it all the same.
        let (url, application) = store(cluster, host: "127.0.0.1", "&sslmode=verify-ca&sslrootcert=\(authority)")
        let provider = try PostgreSQLProvider(url: url)
        defer { provider.close() }
        try provider.setValue(.int(7), forKey: "k")
        #expect(try isEncrypted(cluster, application))
        expectTLSRefusal(
            openingFails(store(cluster, host: "localhost", "&sslmode=verify-ca&sslrootcert=\(other)").url), cluster, Self.untrusted)
    }

    @Test func verifyFullWithAnotherAuthorityFailsClearly() throws {
        let cluster = try PostgreSQLCluster.sharedWithTLS()
        let other = try #require(cluster.otherCertificateAuthorityFile)
        expectTLSRefusal(
            openingFails(store(cluster, host: "localhost", "&sslmode=verify-full&sslrootcert=\(other)").url), cluster, Self.untrusted)
        // Without sslrootcert the system's authorities are trusted, and none signed it.
        expectTLSRefusal(openingFails(store(cluster, host: "localhost", "&sslmode=verify-full").url), cluster, Self.untrusted)
    }

    @Test func verifyFullWithAHostNameTheCertificateDoesNotNameFailsClearly() throws {
        let cluster = try PostgreSQLCluster.sharedWithTLS()
        let authority = try #require(cluster.certificateAuthorityFile)
        expectTLSRefusal(
            openingFails(store(cluster, host: "127.0.0.1", "&sslmode=verify-full&sslrootcert=\(authority)").url), cluster,
            "TLS: the server's certificate does not name the host connected to")
    }

    @Test func requireAgainstAServerWithoutTLSFailsClearlyAndPreferFallsBack() throws {
        let plain = try PostgreSQLCluster.shared()
        expectTLSRefusal(openingFails(store(plain, host: "127.0.0.1", "&sslmode=require").url), plain, "the server does not accept TLS connections")
        // prefer (the default over TCP) takes plain TCP from a server without TLS, TLS from one with it.
        let (url, application) = store(plain, host: "127.0.0.1", "&sslmode=prefer")
        let provider = try PostgreSQLProvider(url: url)
        defer { provider.close() }
        try provider.setValue(.bool(true), forKey: "k")
        #expect(try !isEncrypted(plain, application))
        let withTLS = try PostgreSQLCluster.sharedWithTLS()
        let (tlsURL, tlsApplication) = store(withTLS, host: "127.0.0.1", "")
        let encrypted = try PostgreSQLProvider(url: tlsURL)
        defer { encrypted.close() }
        #expect(try isEncrypted(withTLS, tlsApplication))
    }

    @Test func aWrongPasswordOverTLSIsRefusedAsAPermissionError() throws {
        let cluster = try PostgreSQLCluster.sharedWithTLS()
        let authority = try #require(cluster.certificateAuthorityFile)
        let url = store(cluster, host: "localhost", "&sslmode=verify-full&sslrootcert=\(authority)").url
            .replacingOccurrences(of: "password=\(cluster.password)", with: "password=not-\(cluster.password)-at-all")
        let error = try #require(openingFails(url))
        #expect(error.code == .permissionDenied, "\(error)")
        #expect(error.backend == "PostgreSQL")
        #expect(!"\(error)".contains("not-\(cluster.password)-at-all"))
    }
}
