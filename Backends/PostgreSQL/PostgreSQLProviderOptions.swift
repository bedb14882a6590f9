import AnyDefaultsCore

extension PostgreSQLProvider {
    /// Where the store is and how to reach it: the server, the account, the database, the
    /// namespace, TLS and the time limits.
    ///
    /// ```swift
    /// var options = PostgreSQLProvider.Options(server: .tcp(host: "db.internal", port: 5432), user: "app", database: "settings")
    /// options.namespace = "checkout"             // one of many independent stores in the database
    /// options.password = secret                  // or PGPASSWORD in the environment
    /// options.tls = .verifyFull                  // with trustedCertificatesFile for a private CA
    /// let store = try PostgreSQLProvider(options: options)
    /// ```
    ///
    /// The same as a store string (see ``init(_:environment:)``):
    /// `postgres://app@db.internal:5432/settings?namespace=checkout&sslmode=verify-full`, or for a
    /// Unix socket `postgres:/run/postgresql?user=app&database=settings&namespace=checkout`.
    public struct Options: Sendable, Hashable {
        /// How to reach the server.
        public enum Server: Sendable, Hashable {
            /// A host name or IP address and a TCP port.
            case tcp(host: String, port: Int)
            /// A Unix-domain socket: the socket file itself, such as
            /// `/run/postgresql/.s.PGSQL.5432`.
            case unixSocket(path: String)
        }

        /// Whether and how the connection is encrypted (libpq's `sslmode`).
        public enum TLSMode: String, Sendable, Hashable, CaseIterable {
            /// Never: plain TCP (the default for Unix sockets, where TLS adds nothing).
            case disable
            /// TLS if the server offers it, plain otherwise; the certificate is not checked.
            /// The default for TCP, as in libpq.
            case prefer
            /// TLS or no connection; the certificate is not checked.
            case require
            /// TLS, with a certificate signed by a trusted authority (any host name).
            case verifyCA = "verify-ca"
            /// TLS, with a certificate signed by a trusted authority for the host connected to.
            case verifyFull = "verify-full"
        }

        /// The server.
        public var server: Server
        /// The role to log in as.
        public var user: String
        /// The password, if the server asks for one. Not part of any description or error.
        public var password: String?
        /// The database; `nil` for the one named like ``user`` (the server's default).
        public var database: String?
        /// The store within the database: many independent stores (an app, a tenant, a user) share
        /// one database and its tables. Any text of 1 to 1000 bytes of UTF-8 without NUL.
        public var namespace: String
        /// Encryption of the connection.
        public var tls: TLSMode
        /// A PEM file of the certificate authorities to trust for ``TLSMode/verifyCA`` and
        /// ``TLSMode/verifyFull``; `nil` for the system's.
        public var trustedCertificatesFile: String?
        /// How long opening a connection may take.
        public var connectTimeout: Duration
        /// How long any one statement may take, a write included, before it fails (and the
        /// connection is replaced, since its state is unknown).
        public var timeout: Duration
        /// How often an idle connection checks the stores' revisions: it notices a silently dead
        /// connection, and anything a lost notification did not announce.
        public var heartbeat: Duration
        /// The connection's `application_name`, by which `pg_stat_activity` shows it (and an
        /// administrator can find it); `AnyDefaults` by default.
        public var applicationName: String

        /// Options for a store on `server`; the other settings take their defaults (namespace
        /// `default`, TLS `prefer` over TCP and `disable` over a Unix socket, 10 s to connect,
        /// 10 s per statement, a heartbeat every 10 s).
        public init(server: Server, user: String, password: String? = nil, database: String? = nil, namespace: String = "default") {
            self.server = server
            self.user = user
            self.password = password
            self.database = database
            self.namespace = namespace
            if case .unixSocket = server { tls = .disable } else { tls = .prefer }
            trustedCertificatesFile = nil
            connectTimeout = .seconds(10)
            timeout = .seconds(10)
            heartbeat = .seconds(10)
            applicationName = "AnyDefaults"
        }

        /// The connection's identity: everything but the namespace. Stores whose options share it
        /// share one connection in a process.
        var connectionKey: Options {
            var key = self
            key.namespace = ""
            return key
        }

        /// The server, for messages: never the password.
        var serverDescription: String {
            let place: String = switch server {
            case .tcp(let host, let port): "\(host.contains(":") ? "[\(host)]" : host):\(port)"
            case .unixSocket(let path): path
            }
            return "\(user)@\(place)/\(database ?? user)"
        }

        /// Checks what the server cannot: the namespace, the port, the time limits.
        func validated() throws(DefaultsError) -> Options {
            let bytes = namespace.utf8.count
            guard bytes > 0, bytes <= 1000, !namespace.utf8.contains(0) else {
                throw .postgres(.invalidConfiguration, "A namespace is 1 to 1000 bytes of UTF-8 without NUL; this one has \(bytes) bytes.")
            }
            if case .tcp(let host, let port) = server {
                guard !host.isEmpty else { throw .postgres(.invalidConfiguration, "The server's host name is empty.") }
                guard (1...65_535).contains(port) else { throw .postgres(.invalidConfiguration, "The port \(port) is not between 1 and 65535.") }
            }
            guard !user.isEmpty, !user.utf8.contains(0) else { throw .postgres(.invalidConfiguration, "The user name is empty or holds a NUL.") }
            for (name, value) in [("connecttimeout", connectTimeout), ("timeout", timeout), ("heartbeat", heartbeat)]
            where value <= .zero || value > .seconds(86_400) {
                throw .postgres(.invalidConfiguration, "The \(name) must be more than 0 and at most 86400 seconds.")
            }
            return self
        }
    }
}
