import AnyDefaultsCore
import Foundation

extension PostgreSQLProvider {
    /// Registers the `postgres:` scheme and libpq's other spelling `postgresql:` on `registry`
    /// (``ProviderRegistry/standard`` has them where the `PostgreSQL` package trait is on).
    ///
    /// ```swift
    /// let registry = ProviderRegistry()
    /// PostgreSQLProvider.register(in: registry)
    /// let store = try registry.makeProvider("postgres://app@db.internal/settings?namespace=tenant-1")
    /// ```
    public static func register(in registry: ProviderRegistry) {
        // libpq's two spellings, so that a DATABASE_URL can be pasted as it is.
        for scheme in ["postgres", "postgresql"] {
            registry.register(
                scheme: scheme,
                summary: scheme == "postgres" ? "a PostgreSQL database, shared live by many processes and machines" : "the same as postgres:",
                location: .server("//USER@HOST[:PORT]/DATABASE or /SOCKET/DIR"), options: storeOptions
            ) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
                try PostgreSQLProvider(options: PostgreSQLProvider.Options(configuration))
            }
        }
    }

    /// The options a `postgres:` store string accepts, for registering the scheme
    /// (`ProviderRegistry.standard` does) and for help texts.
    public static let storeOptions: [StoreOption] = [
        StoreOption("namespace", values: "name", summary: "the store within the database (default: default)"),
        StoreOption("user", values: "name", summary: "the role (default: the URL's, else PGUSER, else the system user)"),
        StoreOption("password", values: "text", summary: "the password (better: passwordfile= or PGPASSWORD)"),
        StoreOption("passwordfile", values: "path", summary: "a file whose first line is the password"),
        StoreOption("database", values: "name", summary: "the database (default: the URL's path, else the user's name)"),
        StoreOption("port", values: "number", summary: "the port, or the socket's number for a socket directory (default 5432)"),
        StoreOption("sslmode", values: "disable|prefer|require|verify-ca|verify-full", summary: "TLS (default prefer over TCP)"),
        StoreOption("sslrootcert", values: "path", summary: "PEM file of the authorities to trust for verify-ca/verify-full"),
        StoreOption("connecttimeout", values: "seconds", summary: "how long connecting may take (default 10)"),
        StoreOption("timeout", values: "seconds", summary: "how long one statement may take (default 10)"),
        StoreOption("applicationname", values: "name", summary: "the connection's application_name (default AnyDefaults)"),
    ]
}

extension PostgreSQLProvider.Options {
    /// The options a store string gives.
    ///
    /// - `postgres://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE][?OPTIONS]`: a server over TCP; an
    ///   IPv6 address goes in brackets; `%XX` escapes are decoded in each part.
    /// - `postgres://USER@%2Frun%2Fpostgresql/DATABASE`: a host that is an absolute path (escaped)
    ///   is a socket directory, as in libpq.
    /// - `postgres:/run/postgresql?user=app&database=settings`: a Unix socket, named by its
    ///   directory (the socket `.s.PGSQL.PORT` in it) or by the socket file itself.
    ///
    /// Options (``PostgreSQLProvider/storeOptions``): `namespace`, `user`, `password`,
    /// `passwordfile`, `database`, `port`, `sslmode`, `sslrootcert`, `connecttimeout`, `timeout`,
    /// `applicationname`.
    /// Without a password in the string, `PGPASSWORD` is used if set; without a user, `PGUSER`,
    /// else the user running the process.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidConfiguration`` saying what is wrong.
    public init(_ configuration: StoreConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(DefaultsError)
    {
        let options = configuration.options
        var user: String?
        var password: String?
        var host: String?
        var port: Int?
        var database: String?
        if let authority = configuration.authority {
            let (userInfo, address) = try Self.split(authority)
            if let userInfo {
                let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                user = try Self.decode(String(parts[0]), what: "the user name")
                if parts.count == 2 { password = try Self.decode(String(parts[1]), what: "the password") }
            }
            (host, port) = try Self.hostAndPort(address)
            let path = configuration.location.hasPrefix("/") ? String(configuration.location.dropFirst()) : configuration.location
            database = path.isEmpty ? nil : path
        } else {
            host = configuration.location
        }
        user = options["user"] ?? user ?? environment["PGUSER"] ?? Self.systemUser
        if let text = options["port"] {
            guard let number = Int(text) else { throw .postgres(.invalidConfiguration, "The option port=\(text) is not a number.") }
            port = number
        }
        database = options["database"] ?? database
        if let text = options["password"] {
            password = text
        } else if let file = options["passwordfile"] {
            password = try Self.readPassword(file)
        }
        password = password ?? environment["PGPASSWORD"]

        guard let host, !host.isEmpty else {
            throw .postgres(.invalidConfiguration, "postgres: needs a server: postgres://USER@HOST:PORT/DATABASE or postgres:/SOCKET/DIRECTORY.")
        }
        guard let user, !user.isEmpty else {
            throw .postgres(.invalidConfiguration, "postgres: needs a user: postgres://USER@HOST/DATABASE or ?user=NAME.")
        }
        let server: Server
        if host.hasPrefix("/") {
            server = .unixSocket(path: Self.socketPath(host, port: port ?? 5432))
        } else {
            server = .tcp(host: host, port: port ?? 5432)
        }
        self.init(server: server, user: user, password: password, database: database, namespace: options["namespace"] ?? "default")
        if let mode = options["sslmode"] {
            guard let tls = TLSMode(rawValue: mode.lowercased()) else {
                let accepted = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw .postgres(.invalidConfiguration, "The option sslmode=\(mode) is not accepted; use one of \(accepted).")
            }
            self.tls = tls
        }
        trustedCertificatesFile = options["sslrootcert"]
        connectTimeout = .seconds(try configuration.intOption("connecttimeout", in: 1...86_400, default: 10))
        timeout = .seconds(try configuration.intOption("timeout", in: 1...86_400, default: 10))
        if let name = options["applicationname"] { applicationName = name }
        self = try validated()
    }

    /// `USERINFO@ADDRESS` split at the last `@` (a password may hold one only escaped, but be kind).
    private static func split(_ authority: String) throws(DefaultsError) -> (userInfo: String?, address: String) {
        guard let at = authority.lastIndex(of: "@") else { return (nil, authority) }
        return (String(authority[..<at]), String(authority[authority.index(after: at)...]))
    }

    /// `HOST`, `HOST:PORT`, `[IPV6]` or `[IPV6]:PORT`, decoded.
    private static func hostAndPort(_ address: String) throws(DefaultsError) -> (String, Int?) {
        var host = Substring(address)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw .postgres(.invalidConfiguration, "The address \(address) opens a [ for an IPv6 address but does not close it.")
            }
            let rest = host[host.index(after: close)...]
            if rest.hasPrefix(":") { portText = rest.dropFirst() } else if !rest.isEmpty {
                throw .postgres(.invalidConfiguration, "The address \(address) has text after its ].")
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        var port: Int?
        if let portText {
            guard let number = Int(portText) else { throw .postgres(.invalidConfiguration, "The port in \(address) is not a number.") }
            port = number
        }
        return (try decode(String(host), what: "the host"), port)
    }

    private static func decode(_ text: String, what: String) throws(DefaultsError) -> String {
        guard let decoded = text.removingPercentEncoding else {
            throw .postgres(.invalidConfiguration, "\(what.prefix(1).uppercased() + what.dropFirst()) has a % that is not followed by two hex digits.")
        }
        return decoded
    }

    /// The socket file: `path` itself if it names one (`.s.PGSQL.5432`), else the socket for
    /// `port` in the directory `path`.
    private static func socketPath(_ path: String, port: Int) -> String {
        let name = (path as NSString).lastPathComponent
        if name.hasPrefix(".s.PGSQL.") { return path }
        return (path as NSString).appendingPathComponent(".s.PGSQL.\(port)")
    }

    private static func readPassword(_ path: String) throws(DefaultsError) -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw DefaultsError(
                .invalidConfiguration, "The password file cannot be read.", backend: PostgreSQLProvider.backend, path: path, cause: error)
        }
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }

    /// The name of the user running the process, libpq's default role.
    private static var systemUser: String? {
        let name = ProcessInfo.processInfo.userName
        return name.isEmpty ? nil : name
    }
}
