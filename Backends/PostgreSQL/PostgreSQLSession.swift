import AnyDefaultsCore
import Logging
import PostgresNIO
import Synchronization

/// The one connection of this process to one server (one set of connection options), shared by
/// every store on it, whatever its namespace: it runs their statements in order, LISTENs on their
/// channels, checks their revisions on a heartbeat, and when it drops, reconnects with backoff
/// and has every store catch up on what it missed.
///
/// Everything it does with the connection happens on one event loop, so the answers to the
/// statements arrive, and are handled, in the order the statements were sent.
final class PostgreSQLSession: Sendable {
    private struct WeakSession: Sendable {
        weak var session: PostgreSQLSession?
    }

    private struct WeakNamespace: Sendable {
        weak var namespace: PostgreSQLNamespace?
    }

    private struct State: Sendable {
        var connection: PostgresConnection?
        /// The write statement, prepared on `connection` (set and cleared with it).
        var write: PreparedQuery?
        /// Counts connection attempts, so that late callbacks of an old connection do nothing.
        var generation = 0
        var connecting = false
        /// Failed attempts in a row, for the backoff.
        var failures = 0
        var lastFailure: DefaultsError?
        var namespaces: [String: WeakNamespace] = [:]
        var listening: [String: PostgresListenContext] = [:]
        var heartbeat: RepeatedTask?
        var retry: Scheduled<Void>?
    }

    private static let sessions = Mutex<[PostgreSQLProvider.Options: WeakSession]>([:])

    let options: PostgreSQLProvider.Options
    let eventLoop: any EventLoop
    private let configuration: PostgresConnection.Configuration
    private let logger = Logger(label: "AnyDefaults.PostgreSQL")
    private let state = Mutex(State())

    /// The session for `options` (their connection part), shared in the process.
    static func shared(_ options: PostgreSQLProvider.Options) throws(DefaultsError) -> PostgreSQLSession {
        let key = options.connectionKey
        return try sessions.withLock { sessions throws(DefaultsError) in
            if let session = sessions[key]?.session { return session }
            sessions = sessions.filter { $0.value.session != nil }
            let session = try PostgreSQLSession(key)
            sessions[key] = WeakSession(session: session)
            return session
        }
    }

    private init(_ options: PostgreSQLProvider.Options) throws(DefaultsError) {
        self.options = options
        eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        configuration = try Self.configuration(options)
    }

    deinit {
        let (connection, heartbeat, retry) = state.withLock { ($0.connection, $0.heartbeat, $0.retry) }
        heartbeat?.cancel()
        retry?.cancel()
        if let connection { Self.close(connection) }
    }

    // MARK: Namespaces

    /// The namespace `name` on this server, shared in the process; it starts loading (connecting
    /// first if need be) when created.
    func namespace(named name: String) -> PostgreSQLNamespace {
        let (namespace, isNew) = state.withLock { state -> (PostgreSQLNamespace, Bool) in
            if let namespace = state.namespaces[name]?.namespace, !namespace.isRetired { return (namespace, false) }
            let namespace = PostgreSQLNamespace(name: name, session: self)
            state.namespaces[name] = WeakNamespace(namespace: namespace)
            return (namespace, true)
        }
        if isNew { eventLoop.execute { self.attach(namespace) } }
        return namespace
    }

    /// Forgets `namespace` (its last instance closed): stops listening on its channel, and closes
    /// the connection if no namespace is left.
    func remove(_ namespace: PostgreSQLNamespace) {
        let closing = state.withLock { state -> (PostgresConnection?, PostgresListenContext?) in
            guard state.namespaces[namespace.name]?.namespace === namespace || state.namespaces[namespace.name]?.namespace == nil else {
                return (nil, nil)
            }
            state.namespaces.removeValue(forKey: namespace.name)
            let listener = state.listening.removeValue(forKey: namespace.name)
            guard state.namespaces.values.allSatisfy({ $0.namespace == nil }) else { return (nil, listener) }
            state.heartbeat?.cancel()
            state.heartbeat = nil
            state.retry?.cancel()
            state.retry = nil
            state.generation += 1
            defer {
                state.connection = nil
                state.write = nil
            }
            return (state.connection, listener)
        }
        closing.1?.stop()
        if let connection = closing.0 { Self.close(connection) }
    }

    private var liveNamespaces: [PostgreSQLNamespace] {
        state.withLock { $0.namespaces.values.compactMap(\.namespace) }
    }

    // MARK: Connecting

    private func attach(_ namespace: PostgreSQLNamespace) {
        let (connection, generation) = state.withLock { state -> (PostgresConnection?, Int) in
            if state.connection == nil, !state.connecting, state.retry == nil { beginConnecting(&state) }
            return (state.connection, state.generation)
        }
        if let connection { start(namespace, on: connection, generation: generation) }
    }

    /// Marks a connection attempt begun and schedules it; call under the lock.
    private func beginConnecting(_ state: inout State) {
        state.connecting = true
        state.retry = nil
        state.generation += 1
        let generation = state.generation
        eventLoop.execute { self.connect(generation: generation) }
    }

    private func connect(generation: Int) {
        let logger = logger
        PostgresConnection.connect(on: eventLoop, configuration: configuration, id: generation, logger: logger)
            .flatMap { connection in
                PostgreSQLSchema.ensure(on: connection, logger: logger)
                    .flatMap {
                        connection.prepare(query: PostgreSQLStatements.writeSQL).flatMapErrorThrowing { error in
                            throw DefaultsError.postgres(error, while: "Preparing the write statement")
                        }
                    }
                    .map { (connection, $0) }
                    .flatMapError { error in
                        Self.close(connection)
                        return connection.eventLoop.makeFailedFuture(error)
                    }
            }
            .whenComplete { [weak self] result in
                switch result {
                case .success(let (connection, write)):
                    guard let self else { return Self.close(connection) }
                    self.connected(connection, write: write, generation: generation)
                case .failure(let error):
                    self?.failedToConnect(error, generation: generation)
                }
            }
    }

    private func connected(_ connection: PostgresConnection, write: PreparedQuery, generation: Int) {
        let namespaces = state.withLock { state -> [PostgreSQLNamespace]? in
            guard state.generation == generation else { return nil }
            state.connecting = false
            state.failures = 0
            state.lastFailure = nil
            state.connection = connection
            state.write = write
            state.listening = [:]
            if state.heartbeat == nil {
                let period = TimeAmount(options.heartbeat)
                state.heartbeat = eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { [weak self] _ in
                    self?.beat()
                }
            }
            return state.namespaces.values.compactMap(\.namespace)
        }
        guard let namespaces else { return Self.close(connection) }
        connection.closeFuture.whenComplete { [weak self] _ in self?.disconnected(generation: generation) }
        for namespace in namespaces { start(namespace, on: connection, generation: generation) }
    }

    private func failedToConnect(_ error: any Error, generation: Int) {
        let failure = DefaultsError.postgres(error, while: "Connecting to \(options.serverDescription)")
        let unloaded = state.withLock { state -> [PostgreSQLNamespace] in
            guard state.generation == generation else { return [] }
            state.connecting = false
            state.failures += 1
            state.lastFailure = failure
            let namespaces = state.namespaces.values.compactMap(\.namespace)
            if namespaces.contains(where: \.isLoaded) { scheduleRetry(&state) }
            return namespaces.filter { !$0.isLoaded }
        }
        // A store being opened fails now rather than waiting for the server to come back.
        for namespace in unloaded { namespace.failLoad(failure) }
    }

    private func disconnected(generation: Int) {
        let namespaces = state.withLock { state -> [PostgreSQLNamespace] in
            guard state.generation == generation, state.connection != nil else { return [] }
            state.connection = nil
            state.write = nil
            state.listening = [:]
            let namespaces = state.namespaces.values.compactMap(\.namespace)
            if !namespaces.isEmpty { scheduleRetry(&state) }
            return namespaces
        }
        // A connection closed on purpose (the last store closed) is of an older generation.
        guard !namespaces.isEmpty else { return }
        logger.notice("The connection to \(options.serverDescription) dropped; reconnecting.")
        for namespace in namespaces { namespace.connectionLost() }
    }

    /// Schedules the next attempt: at once after a drop, then after 50 ms doubling to 2 s, with
    /// jitter so that a fleet does not reconnect in step. Call under the lock.
    private func scheduleRetry(_ state: inout State) {
        guard state.retry == nil, !state.connecting else { return }
        let base = state.failures == 0 ? 0.005 : min(2.0, 0.05 * Double(1 << min(state.failures - 1, 10)))
        let delay = TimeAmount.nanoseconds(Int64(base * Double.random(in: 0.5...1.0) * 1e9))
        state.retry = eventLoop.scheduleTask(in: delay) { [weak self] in
            guard let self else { return }
            self.state.withLock { state in
                state.retry = nil
                if state.connection == nil, !state.connecting, !state.namespaces.isEmpty { self.beginConnecting(&state) }
            }
        }
    }

    /// Listens on the namespace's channel, then has it catch up: LISTEN is sent first, so that
    /// every commit after the catch-up's snapshot is announced.
    /// (A namespace that replaced one whose last instance was leaving finds its channel listened
    /// on already, and still catches up.)
    private func start(_ namespace: PostgreSQLNamespace, on connection: PostgresConnection, generation: Int) {
        let current = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            if state.listening[namespace.name] == nil {
                state.listening[namespace.name] = connection.addListener(channel: namespace.channel) { [weak self] _, notification in
                    self?.notified(notification)
                }
            }
            return true
        }
        if current { namespace.resume() }
    }

    // MARK: Notifications and the heartbeat

    private func notified(_ notification: PostgresMessage.NotificationResponse) {
        let payload = notification.payload
        guard let space = payload.firstIndex(of: " "), let revision = Int64(payload[..<space]) else { return }
        let name = String(payload[payload.index(after: space)...])
        state.withLock { $0.namespaces[name]?.namespace }?.heard(revision)
    }

    /// Asks for every namespace's revision: a lost notification costs at most one period, and a
    /// connection that died silently fails the statement's time limit and is replaced.
    private func beat() {
        let namespaces = liveNamespaces.filter(\.isLoaded)
        guard !namespaces.isEmpty else { return }
        run(PostgreSQLStatements.revisions(of: namespaces.map(\.name))).whenSuccess { result in
            guard let revisions = try? PostgreSQLStatements.revisions(result) else { return }
            for namespace in namespaces { namespace.heard(revisions[namespace.name] ?? 0) }
        }
    }

    // MARK: Statements

    /// Runs `query` on the connection, within the statement time limit. Fails at once with
    /// ``DefaultsError/Code-swift.struct/unavailable`` when there is no connection; a statement
    /// that times out closes the connection (its state is unknown) and fails with
    /// ``PostgreSQLTimeout``.
    func run(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
        let logger = logger
        return run { connection, _ in connection.query(query, logger: logger) }
    }

    /// Runs the prepared write (``PostgreSQLStatements/writeSQL``) with `binds`, like
    /// ``run(_:)``, and returns its rows.
    func runWrite(_ binds: [PostgresData]) -> EventLoopFuture<[PostgresRow]> {
        run { _, write in write.execute(binds) }
    }

    /// Statements are sent in the order of the calls, whatever thread makes them: a namespace
    /// numbers its statements in that order and relies on the answers following it. The
    /// connection sends a statement given on the event loop at once but one given elsewhere
    /// through the loop's task queue, so one sent from the loop (a catch-up after a notification)
    /// would overtake writes queued before it; from the loop it is queued too.
    private func run<Value: Sendable>(
        _ send: @escaping @Sendable (PostgresConnection, PreparedQuery) -> EventLoopFuture<Value>
    ) -> EventLoopFuture<Value> {
        let (connection, write, failure) = state.withLock { ($0.connection, $0.write, $0.lastFailure) }
        guard let connection, let write else {
            var message = "Not connected to \(options.serverDescription) (reconnecting); nothing was written."
            if let failure { message += " Last attempt: \(failure.message)" }
            return eventLoop.makeFailedFuture(DefaultsError.postgres(.unavailable, message, cause: failure))
        }
        let promise = eventLoop.makePromise(of: Value.self)
        let answered = Atomic(false)
        let timeout = options.timeout
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            guard !answered.exchange(true, ordering: .relaxed) else { return }
            promise.fail(PostgreSQLTimeout(limit: timeout))
            Self.close(connection)
        }
        let submit: @Sendable () -> Void = {
            send(connection, write).whenComplete { result in
                timer.cancel()
                guard !answered.exchange(true, ordering: .relaxed) else { return }
                promise.completeWith(result)
            }
        }
        if eventLoop.inEventLoop { eventLoop.execute(submit) } else { submit() }
        return promise.futureResult
    }

    // MARK: Configuration

    private static func configuration(_ options: PostgreSQLProvider.Options) throws(DefaultsError) -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch options.server {
        case .tcp(let host, let port):
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: options.user, password: options.password, database: options.database,
                tls: try tls(options))
        case .unixSocket(let path):
            configuration = PostgresConnection.Configuration(
                unixSocketPath: path, username: options.user, password: options.password, database: options.database)
            configuration.tls = try tls(options)
        }
        configuration.options.connectTimeout = TimeAmount(options.connectTimeout)
        // The server gives up a little before the client does, with a clean error.
        let milliseconds = max(1, Int(TimeAmount(options.timeout).nanoseconds / 1_000_000) - 100)
        configuration.options.additionalStartupParameters = [
            ("application_name", options.applicationName), ("statement_timeout", "\(milliseconds)"),
        ]
        return configuration
    }

    private static func tls(_ options: PostgreSQLProvider.Options) throws(DefaultsError) -> PostgresConnection.Configuration.TLS {
        guard options.tls != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch options.tls {
        case .disable, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let file = options.trustedCertificatesFile { tls.trustRoots = .file(file) }
        do {
            let context = try NIOSSLContext(configuration: tls)
            return options.tls == .prefer ? .prefer(context) : .require(context)
        } catch {
            throw DefaultsError(
                .invalidConfiguration, "The TLS settings cannot be used: \(error).", backend: PostgreSQLProvider.backend,
                path: options.trustedCertificatesFile, cause: error)
        }
    }

    /// Closes `connection`, keeping it alive until it is closed (postgres-nio asserts that a
    /// connection is closed before it goes away).
    private static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}

/// A statement that got no answer within the time limit. Its outcome is unknown: a write may or
/// may not have been committed.
struct PostgreSQLTimeout: Error, Sendable, CustomStringConvertible {
    var limit: Duration
    var description: String { "no answer within \(limit)" }
}
