import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for the tests: `initdb` and `pg_ctl` from Debian's `postgresql`
/// package (installed by scripts/bootstrap) in a temporary directory, listening on a Unix socket
/// there and on a free loopback port, never on a system cluster.
///
/// ```swift
/// let cluster = try PostgreSQLCluster.shared()          // one per test process
/// let store = try PostgreSQLProvider(url: cluster.storeString(namespace: "t1"))
/// ```
///
/// A cluster made with `tls: true` also accepts TLS (`ssl=on`) with a server certificate for the
/// host name `localhost` only, signed by a throwaway certificate authority (``certificateAuthorityFile``);
/// ``otherCertificateAuthorityFile`` is a second authority that signed nothing of this cluster.
/// Both are made with `openssl` in the cluster's directory (scripts/bootstrap installs it).
///
/// When the tests run as root, the server runs as the `postgres` system user (which the package
/// creates), since PostgreSQL refuses to run as root. The shared cluster stops when the test
/// process exits; a watchdog process stops it too if the test process dies without exiting. If no
/// server can be started, ``shared()`` throws an error that says why: the tests that need one
/// fail, they never pass without a server.
public final class PostgreSQLCluster: Sendable {
    /// Why no cluster could be started.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// The superuser of the cluster; over TCP it logs in with ``password``, over the socket it is
    /// trusted.
    public var user: String { Self.superuser }
    public var password: String { Self.superuserPassword }
    private static let superuser = "anydefaults"
    private static let superuserPassword = "test-secret"
    public let directory: String
    public let socketDirectory: String
    public let port: Int
    /// With TLS: the certificate (PEM) of the authority that signed the server's certificate.
    public let certificateAuthorityFile: String?
    /// With TLS: the certificate (PEM) of an authority that signed nothing of this cluster.
    public let otherCertificateAuthorityFile: String?
    private let binaries: String
    private let runAs: String?
    private let stopped = Mutex(false)

    /// The shared clusters, by whether they accept TLS.
    private static let sharedClusters = Mutex<[Bool: Result<PostgreSQLCluster, Unavailable>]>([:])

    /// The cluster shared by the tests of this process, started on first use and stopped when the
    /// process exits.
    public static func shared() throws -> PostgreSQLCluster {
        try shared(tls: false)
    }

    /// The cluster with TLS shared by the tests of this process (see ``init(purpose:tls:)``),
    /// started on first use and stopped when the process exits.
    public static func sharedWithTLS() throws -> PostgreSQLCluster {
        try shared(tls: true)
    }

    private static func shared(tls: Bool) throws -> PostgreSQLCluster {
        try sharedClusters.withLock { clusters in
            if clusters[tls] == nil {
                let started = Result { () throws(Unavailable) in try PostgreSQLCluster(purpose: tls ? "shared-tls" : "shared", tls: tls) }
                let firstStarted = !clusters.values.contains { (try? $0.get()) != nil }
                clusters[tls] = started
                if case .success = started, firstStarted { atexit { PostgreSQLCluster.stopShared() } }
            }
            return try clusters[tls]!.get()
        }
    }

    private static func stopShared() {
        for case .success(let cluster) in sharedClusters.withLock({ Array($0.values) }) { cluster.stop() }
    }

    /// Starts a cluster of its own, for a test that restarts or stops the server; call ``stop()``
    /// when done. With `tls`, the server accepts TLS connections too (see the type's description).
    public init(purpose: String, tls: Bool = false) throws(Unavailable) {
        binaries = try Self.findBinaries()
        runAs = geteuid() == 0 ? "postgres" : nil
        if let runAs, getpwnam(runAs) == nil {
            throw Unavailable(
                description: "PostgreSQL cannot run as root and there is no '\(runAs)' user to run it as: run scripts/bootstrap (it installs Debian's postgresql package, which creates that user).")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("anydefaults-pg-\(purpose)-\(UUID().uuidString.prefix(8))").path
        socketDirectory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            if let runAs, let owner = getpwnam(runAs) { chown(directory, owner.pointee.pw_uid, owner.pointee.pw_gid) }
            try Data((Self.superuserPassword + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/superuser-password"))
            if let runAs, let owner = getpwnam(runAs) { chown(directory + "/superuser-password", owner.pointee.pw_uid, owner.pointee.pw_gid) }
        } catch {
            throw Unavailable(description: "Cannot prepare \(directory) for a PostgreSQL cluster: \(error)")
        }
        if tls {
            let authorities = try Self.makeCertificates(in: directory + "/tls", serverOwner: runAs)
            certificateAuthorityFile = authorities.signer
            otherCertificateAuthorityFile = authorities.other
        } else {
            certificateAuthorityFile = nil
            otherCertificateAuthorityFile = nil
        }
        var lastFailure = ""
        var started: Int?
        // A free port can be taken by someone else before the server binds it: try a few.
        for attempt in 0..<3 {
            let port = Self.freeLoopbackPort()
            do {
                if attempt == 0 {
                    let arguments = [
                        "-D", directory + "/data", "-U", Self.superuser, "--pwfile", directory + "/superuser-password",
                        "--auth-local", "trust", "--auth-host", "scram-sha-256", "-E", "UTF8", "--locale", "C", "--no-sync",
                    ]
                    try Self.run("initdb", arguments, binaries: binaries, runAs: runAs, directory: directory)
                    if tls { try Self.enableTLS(directory: directory) }
                }
                try Self.run("pg_ctl", Self.startArguments(directory: directory, port: port), binaries: binaries, runAs: runAs, directory: directory)
                started = port
                break
            } catch {
                lastFailure = "\(error)"
            }
        }
        guard let started else {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: directory)
            throw Unavailable(description: "The PostgreSQL test cluster did not start: \(lastFailure)\n\(log.suffix(2000))")
        }
        port = started
        startWatchdog()
    }

    /// `postgres:` over the Unix socket, trusted, in the database `postgres`.
    public func storeString(namespace: String, options: String = "") -> String {
        "postgres:\(socketDirectory)?user=\(user)&database=postgres&port=\(port)&namespace=\(Self.escape(namespace))" + options
    }

    /// `postgres://` over TCP on loopback; the password must come from an option or PGPASSWORD.
    public func tcpStoreString(namespace: String, options: String = "") -> String {
        "postgres://\(user)@127.0.0.1:\(port)/postgres?namespace=\(Self.escape(namespace))" + options
    }

    /// Runs SQL with psql over the socket and returns its output (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run("psql", ["-h", socketDirectory, "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql])
    }

    /// Ends every connection whose `application_name` is `application` (`pg_terminate_backend`),
    /// as a network failure or an administrator would; returns how many were ended.
    @discardableResult
    public func terminateConnections(of application: String = "AnyDefaults") throws -> Int {
        let output = try psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(application)' AND pid <> pg_backend_pid()")
        return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Stops the server (fast shutdown: connections are ended) and starts it again on the same port.
    public func restart(downFor pause: Duration = .zero) throws {
        try stopServerOnly()
        if pause > .zero { Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18) }
        try startServerOnly()
    }

    /// Stops the server, leaving its data, until ``startServerOnly()``.
    public func stopServerOnly() throws {
        try run("pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts the server stopped by ``stopServerOnly()`` again, on the same port.
    public func startServerOnly() throws {
        // The port was free a moment ago; if something else holds it for a moment now, wait.
        for _ in 0..<4 {
            if (try? run("pg_ctl", Self.startArguments(directory: directory, port: port))) != nil { return }
            Thread.sleep(forTimeInterval: 0.5)
        }
        try run("pg_ctl", Self.startArguments(directory: directory, port: port))
    }

    /// Stops the server and removes its directory. Calling it again does nothing.
    public func stop() {
        let wasStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        _ = try? run("pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "30", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Internals

    /// Makes, with `openssl` in `folder`: an authority that signs a certificate for the host name
    /// `localhost` (no address), the server's key (readable by `serverOwner` only, as the server
    /// demands), and a second authority. Returns the two authorities' certificates.
    private static func makeCertificates(in folder: String, serverOwner: String?) throws(Unavailable) -> (signer: String, other: String) {
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Unavailable(description: "openssl was not found (the TLS tests make their certificates with it): run scripts/bootstrap.")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try Data("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n".utf8)
                .write(to: URL(fileURLWithPath: folder + "/server.ext"))
        } catch {
            throw Unavailable(description: "Cannot prepare \(folder) for the test certificates: \(error)")
        }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let commands: [[String]] = [
            ["req", "-x509"] + key + ["-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=AnyDefaults test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ["req", "-x509"] + key + ["-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "2", "-subj", "/CN=AnyDefaults other test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ["req"] + key + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt",
             "-days", "2", "-extfile", "server.ext"],
        ]
        for arguments in commands {
            let status = spawnAndWait(
                ["/bin/sh", "-c", #"cd "$1" && shift && exec "$@" </dev/null >/dev/null 2>openssl.err"#, "sh", folder, openssl] + arguments,
                environment: ProcessInfo.processInfo.environment)
            guard status == 0 else {
                let errorText = (try? String(contentsOfFile: folder + "/openssl.err", encoding: .utf8)) ?? ""
                throw Unavailable(description: "openssl \(arguments.joined(separator: " ")) failed (status \(status)): \(errorText)")
            }
        }
        // The server refuses a key that others can read, or that it does not own.
        chmod(folder + "/server.key", 0o600)
        if let serverOwner, let owner = getpwnam(serverOwner) {
            for file in ["server.key", "server.crt"] { chown(folder + "/" + file, owner.pointee.pw_uid, owner.pointee.pw_gid) }
        }
        return (folder + "/ca.crt", folder + "/other-ca.crt")
    }

    /// Turns TLS on in the cluster's configuration (so that it stays on across restarts).
    private static func enableTLS(directory: String) throws(Unavailable) {
        let settings = "\nssl = on\nssl_cert_file = '\(directory)/tls/server.crt'\nssl_key_file = '\(directory)/tls/server.key'\n"
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/data/postgresql.conf"))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(settings.utf8))
        } catch {
            throw Unavailable(description: "Cannot turn TLS on in \(directory)/data/postgresql.conf: \(error)")
        }
    }

    /// `pg_ctl start` for the cluster in `directory`: its socket there, TCP on loopback only.
    private static func startArguments(directory: String, port: Int) -> [String] {
        [
            "-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60", "-o",
            "-k \(directory) -p \(port) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", "start",
        ]
    }

    /// Stops the cluster if this process dies without running its exit handlers (a crash, a
    /// SIGKILL): a shell that polls this process and then stops the server.
    private func startWatchdog() {
        let pgCtl = binaries + "/pg_ctl"
        let stop = (runAs.map { "runuser -u \($0) -- " } ?? "") + "\(pgCtl) -D '\(directory)/data' -m immediate -w stop"
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done; if [ -d '\(directory)/data' ]; then \(stop) >/dev/null 2>&1; rm -rf '\(directory)'; fi"
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", script]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }

    @discardableResult
    private func run(_ tool: String, _ arguments: [String]) throws(Unavailable) -> String {
        try Self.run(tool, arguments, binaries: binaries, runAs: runAs, directory: directory)
    }

    /// Runs `tool` (as ``runAs`` when set) in `directory` and returns its standard output.
    ///
    /// posix_spawn and waitpid rather than Foundation's Process: `pg_ctl start` leaves the server
    /// running, and Foundation's Process was seen never to notice that pg_ctl had exited; output goes
    /// to files, not pipes, which the server would hold open.
    @discardableResult
    private static func run(
        _ tool: String, _ arguments: [String], binaries: String, runAs: String?, directory: String
    ) throws(Unavailable) -> String {
        let command = (runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [binaries + "/" + tool] + arguments
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("anydefaults-pg-run-\(UUID().uuidString)").path
        defer {
            unlink(capture + ".out")
            unlink(capture + ".err")
        }
        // The shell enters the directory (readable by the server's user) and redirects.
        let script = #"cd "$1" && shift && exec "$@" </dev/null >"$OUT" 2>"$ERR""#
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        environment["OUT"] = capture + ".out"
        environment["ERR"] = capture + ".err"
        environment.removeValue(forKey: "PGPASSWORD")
        let status = spawnAndWait(["/bin/sh", "-c", script, "sh", directory] + command, environment: environment)
        let text = (try? String(contentsOfFile: capture + ".out", encoding: .utf8)) ?? ""
        guard status == 0 else {
            let errorText = (try? String(contentsOfFile: capture + ".err", encoding: .utf8)) ?? ""
            throw Unavailable(description: "\(tool) \(arguments.joined(separator: " ")) failed (status \(status)): \(errorText)")
        }
        return text
    }

    /// Runs `arguments` (the first is the executable's path) and waits for it; returns its exit
    /// status, or -1 if it could not be started or ended by a signal.
    private static func spawnAndWait(_ arguments: [String], environment: [String: String]) -> Int32 {
        var argv = arguments.map { strdup($0) }
        argv.append(nil)
        var envp = environment.map { strdup("\($0.key)=\($0.value)") }
        envp.append(nil)
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        guard posix_spawn(&pid, arguments[0], nil, nil, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }

    /// Where initdb and pg_ctl are: on the PATH, else `pg_config --bindir`, else Debian's
    /// `/usr/lib/postgresql/<newest>/bin`.
    private static func findBinaries() throws(Unavailable) -> String {
        let fileManager = FileManager.default
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        where fileManager.isExecutableFile(atPath: directory + "/initdb") && fileManager.isExecutableFile(atPath: directory + "/pg_ctl") {
            return URL(fileURLWithPath: directory + "/initdb").resolvingSymlinksInPath().deletingLastPathComponent().path
        }
        let versions = ((try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() where fileManager.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/initdb") {
            return "/usr/lib/postgresql/\(version)/bin"
        }
        throw Unavailable(
            description: "PostgreSQL's server programs (initdb, pg_ctl) were not found on the PATH or in /usr/lib/postgresql/*/bin: run scripts/bootstrap, which installs Debian's postgresql package.")
    }

    /// A TCP port on 127.0.0.1 that is free now, below the range the system takes the local
    /// ports of outgoing connections from: a restart leaves the port free for a moment, and an
    /// outgoing connection (the provider's own, reconnecting) must not be given it then.
    private static func freeLoopbackPort() -> Int {
        // Linux says where the range starts; 32768 is its default and below Apple's 49152.
        #if os(Linux)
        let rangeStart = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
        #else
        let rangeStart = 32768
        #endif
        let highest = max(10_100, rangeStart) - 1
        for _ in 0..<200 {
            let port = Int.random(in: 10_000...highest)
            if bindLoopback(port: port) == port { return port }
        }
        return bindLoopback(port: 0) ?? Int.random(in: 10_000...highest)
    }

    /// Binds a socket to `port` on 127.0.0.1 (0: any free port) and closes it; returns the port
    /// bound, or nil.
    private static func bindLoopback(port: Int) -> Int? {
        #if canImport(Glibc)
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Foundation.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
