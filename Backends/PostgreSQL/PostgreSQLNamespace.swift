import AnyDefaultsCore
import Dispatch
import PostgresNIO
import Synchronization

/// One namespace (one store) of one server, shared by every ``PostgreSQLProvider`` instance on
/// it in this process: the replica every read is served from, the writes, and the events.
///
/// The replica is loaded whole when the namespace is first opened, then kept fresh: a write of
/// this process is folded in when it commits; another client's commit is announced by a
/// notification (its revision), and the rows written after the replica's revision are read
/// (a *catch-up*: the rows of the keys the change log lists after it). Notifications are not
/// durable, so a catch-up also runs after every reconnect and whenever the heartbeat finds a newer
/// revision; a replica older than what the change log still reaches back to (its entries and the
/// removal markers are pruned) is reloaded whole. Events go to each instance's observers in
/// commit order: `.local` for the instance that wrote, `.external` for the others.
final class PostgreSQLNamespace: Sendable {
    private struct Member: Sendable {
        weak var broadcaster: ChangeBroadcaster?
    }

    /// A catch-up sent: its number, whether it reads everything, and ``State/folds`` then.
    private struct CatchUp: Sendable {
        var ticket: Int
        var full: Bool
        var folds: Int
    }

    private struct State: Sendable {
        var replica = PostgreSQLReplica()
        /// The newest revision heard of (notifications, the heartbeat).
        var heard: Int64 = 0
        /// The number of the catch-up in flight, if one is.
        var catchUpTicket: Int?
        /// Statements of this namespace are numbered as they are sent (the connection answers them
        /// in that order); the writes sent and not yet folded in, by number.
        var nextTicket = 0
        var writesInFlight: Set<Int> = []
        /// A catch-up's answer that waits for writes sent before it: their callbacks may run after
        /// its own, and it may hold their rows, which must be known as theirs first.
        var deferredCatchUp: (catchUp: CatchUp, result: Result<PostgresQueryResult, any Error>)?
        /// Counts this process's commits folded in on their own answer (not by a catch-up).
        var folds = 0
        var members: [ObjectIdentifier: Member] = [:]
        var loadWaiters: [EventLoopPromise<Void>] = []
        var loadFailure: DefaultsError?
        /// Writes of this process waiting for the rows before them, by revision.
        var commitWaiters: [Int64: [EventLoopPromise<Void>]] = [:]
    }

    /// Change log entries and removal markers older than this many revisions are pruned, every
    /// that many revisions.
    static let markerRetention: Int64 = 1024

    let name: String
    /// The LISTEN channel: `anydefaults_` and a 64-bit hash of the name (channels are identifiers
    /// of at most 63 bytes; the payload names the namespace, so a shared hash only costs a look).
    let channel: String
    let session: PostgreSQLSession
    private let state = Mutex(State())
    /// Set, under the lock, when the last instance leaves; read without it by the session.
    private let retired = Atomic(false)
    /// Events of catch-ups are delivered here, off the event loop: observers may write
    /// synchronously, which must not happen on the loop.
    private static let delivery = DispatchQueue(label: "AnyDefaults.PostgreSQL.events")

    init(name: String, session: PostgreSQLSession) {
        self.name = name
        self.session = session
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        channel = "anydefaults_" + String(hash, radix: 16)
    }

    var isLoaded: Bool { state.withLock { $0.replica.isLoaded } }

    // MARK: Members

    /// Adds an instance, unless the namespace's last instance left (it is leaving the session,
    /// which then gives a new instance a new namespace): `false` then.
    func join(_ broadcaster: ChangeBroadcaster) -> Bool {
        state.withLock { state in
            guard !retired.load(ordering: .relaxed) else { return false }
            state.members[ObjectIdentifier(broadcaster)] = Member(broadcaster: broadcaster)
            return true
        }
    }

    /// Removes an instance; the namespace leaves the session with its last instance. (An
    /// instance opening at that moment must not join it: the session no longer tells it of
    /// notifications, and a second namespace of that name would take its own writes for
    /// another client's.)
    func leave(_ broadcaster: ChangeBroadcaster) {
        let isEmpty = state.withLock { state in
            state.members.removeValue(forKey: ObjectIdentifier(broadcaster))
            if state.members.isEmpty { retired.store(true, ordering: .releasing) }
            return state.members.isEmpty
        }
        if isEmpty { session.remove(self) }
    }

    /// Whether the last instance left (see ``join(_:)``).
    var isRetired: Bool { retired.load(ordering: .acquiring) }

    // MARK: Reads

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        try state.withLock { state throws(DefaultsError) in
            if let damage = state.replica.damaged[key] { throw damage }
            return state.replica.values[key]
        }
    }

    var keys: [String] {
        state.withLock { Array($0.replica.values.keys) + Array($0.replica.damaged.keys) }
    }

    var values: [String: DefaultsValue] {
        state.withLock { $0.replica.values }
    }

    // MARK: Loading and catching up

    /// Succeeds once the replica is loaded (at once if it is), or fails with the reason it could
    /// not be.
    func loaded() -> EventLoopFuture<Void> {
        let eventLoop = session.eventLoop
        return state.withLock { state in
            if state.replica.isLoaded { return eventLoop.makeSucceededVoidFuture() }
            if let failure = state.loadFailure { return eventLoop.makeFailedFuture(failure) }
            let promise = eventLoop.makePromise(of: Void.self)
            state.loadWaiters.append(promise)
            return promise.futureResult
        }
    }

    /// The connection could not be made before the replica was ever loaded.
    func failLoad(_ failure: DefaultsError) {
        let waiters = state.withLock { state -> [EventLoopPromise<Void>] in
            guard !state.replica.isLoaded else { return [] }
            state.loadFailure = failure
            defer { state.loadWaiters = [] }
            return state.loadWaiters
        }
        for waiter in waiters { waiter.fail(failure) }
    }

    /// The session (re)connected and listens on the channel: catch up on what was missed.
    func resume() {
        state.withLock { $0.loadFailure = nil }
        catchUp()
    }

    /// Another commit was announced, or the heartbeat saw the revision.
    func heard(_ revision: Int64) {
        let behind = state.withLock { state in
            state.heard = max(state.heard, revision)
            return state.replica.isLoaded && revision > state.replica.known
        }
        if behind { catchUp() }
    }

    /// The connection dropped: writes waiting for the rows before them see their own changes now
    /// (they committed), and the catch-up after reconnecting brings the rest.
    func connectionLost() {
        let waiters = state.withLock { state -> [EventLoopPromise<Void>] in
            // A catch-up's answer from the old connection is out of date: the reconnect reads again.
            state.catchUpTicket = nil
            state.deferredCatchUp = nil
            distribute(state.replica.applyPending(), &state)
            defer { state.commitWaiters = [:] }
            return state.commitWaiters.values.flatMap { $0 }
        }
        for waiter in waiters { waiter.succeed() }
        deliverLater()
    }

    /// Reads what was committed after the replica's revision (everything, for the first load or
    /// when rows it needs were pruned), unless a catch-up is running: it runs again afterwards if
    /// more was heard meanwhile.
    private func catchUp(full: Bool = false) {
        let sent = state.withLock { state -> (catchUp: CatchUp, answer: EventLoopFuture<PostgresQueryResult>)? in
            guard state.catchUpTicket == nil else { return nil }
            let full = full || !state.replica.isLoaded
            let query = PostgreSQLStatements.catchUp(namespace: name, after: state.replica.known, full: full)
            // Numbered and sent under the lock, so that numbers follow the connection's order.
            state.nextTicket += 1
            state.catchUpTicket = state.nextTicket
            return (CatchUp(ticket: state.nextTicket, full: full, folds: state.folds), session.run(query))
        }
        guard let sent else { return }
        sent.answer.whenComplete { result in
            let ready = self.state.withLock { state -> Bool in
                // An answer from before a reconnect is out of date: the reconnect reads again.
                guard state.catchUpTicket == sent.catchUp.ticket else { return false }
                guard let earliest = state.writesInFlight.min(), earliest < sent.catchUp.ticket else { return true }
                state.deferredCatchUp = (sent.catchUp, result)
                return false
            }
            if ready { self.caughtUp(result, sent.catchUp) }
        }
    }

    /// A write sent as `ticket` was folded in (or failed): a catch-up waiting for it goes on.
    private func writeSettled(_ ticket: Int) {
        let deferred = state.withLock { state -> (catchUp: CatchUp, result: Result<PostgresQueryResult, any Error>)? in
            state.writesInFlight.remove(ticket)
            guard let deferred = state.deferredCatchUp, (state.writesInFlight.min() ?? .max) > deferred.catchUp.ticket else { return nil }
            state.deferredCatchUp = nil
            return deferred
        }
        if let deferred { caughtUp(deferred.result, deferred.catchUp) }
    }

    private func caughtUp(_ result: Result<PostgresQueryResult, any Error>, _ catchUp: CatchUp) {
        let full = catchUp.full
        var again = false
        var reloadWhole = false
        var stale = false
        var loadWaiters: [EventLoopPromise<Void>] = []
        var loadFailure: DefaultsError?
        var commitWaiters: [EventLoopPromise<Void>] = []
        state.withLock { state in
            state.catchUpTicket = nil
            let delta: PostgreSQLStatements.Delta
            do {
                delta = try PostgreSQLStatements.delta(result.get())
            } catch {
                if !state.replica.isLoaded {
                    loadFailure = .postgres(error, while: "Loading the namespace \"\(name)\"")
                    state.loadFailure = loadFailure
                    loadWaiters = state.loadWaiters
                    state.loadWaiters = []
                }
                // Otherwise the next notification, heartbeat or reconnect tries again.
                return
            }
            // Commits of ours folded in since it was sent (answered after it, handled before it)
            // may be newer than what it read: read again rather than go back in time. (Without
            // them, an older revision is the server's, restored from a backup: taken as it is.)
            if state.replica.isLoaded, delta.revision < state.replica.known, state.folds != catchUp.folds {
                stale = true
                return
            }
            if full {
                distribute(state.replica.reload(delta), &state)
            } else if state.replica.canCatchUp(with: delta) {
                distribute(state.replica.apply(delta), &state)
            } else {
                reloadWhole = true
                return
            }
            loadWaiters = state.loadWaiters
            state.loadWaiters = []
            let known = state.replica.known
            for revision in state.commitWaiters.keys where revision <= known {
                commitWaiters += state.commitWaiters.removeValue(forKey: revision) ?? []
            }
            let newestPending = state.commitWaiters.keys.max() ?? 0
            again = max(state.heard, newestPending) > known
        }
        if stale { return self.catchUp(full: full) }
        if reloadWhole { return self.catchUp(full: true) }
        for waiter in loadWaiters {
            if let loadFailure { waiter.fail(loadFailure) } else { waiter.succeed() }
        }
        for waiter in commitWaiters { waiter.succeed() }
        deliverLater()
        if again { self.catchUp() }
    }

    /// Succeeds once the replica holds everything committed when the server answers: asks for
    /// the namespace's revision and catches up to it.
    func refresh() -> EventLoopFuture<Void> {
        let eventLoop = session.eventLoop
        return session.run(PostgreSQLStatements.revisions(of: [name]))
            .flatMapThrowing { [name] in try PostgreSQLStatements.revisions($0)[name] ?? 0 }
            .flatMap { revision in
                let waiter = self.state.withLock { state -> EventLoopPromise<Void>? in
                    state.heard = max(state.heard, revision)
                    guard revision > state.replica.known else { return nil }
                    let promise = eventLoop.makePromise(of: Void.self)
                    state.commitWaiters[revision, default: []].append(promise)
                    return promise
                }
                guard let waiter else { return eventLoop.makeSucceededVoidFuture() }
                self.catchUp()
                return waiter.futureResult
            }
    }

    // MARK: Writes

    /// Writes `changes` (valid, canonical, each key once) for the instance of `writer`; succeeds
    /// once they are committed and in the replica.
    func write(_ changes: [DefaultsChange], from writer: ChangeBroadcaster) -> EventLoopFuture<Void> {
        let binds: [PostgresData]
        do {
            binds = try PostgreSQLStatements.writeBinds(namespace: name, channel: channel, changes: changes)
        } catch {
            return session.eventLoop.makeFailedFuture(error)
        }
        return send({ $0.runWrite(binds) }, decode: PostgreSQLStatements.writeCommit, from: writer) { _ in changes }
    }

    /// Removes every key of the namespace for the instance of `writer`.
    func removeAll(from writer: ChangeBroadcaster) -> EventLoopFuture<Void> {
        send(query: PostgreSQLStatements.removeAll(namespace: name, channel: channel), from: writer) { commit in
            (commit.removedKeys ?? []).compactMap { String(validating: $0, as: UTF8.self) }.map { .remove($0) }
        }
    }

    /// Removes `key` (valid, canonical) if it holds a value, for the instance of `writer`; the
    /// future tells whether it did.
    func remove(_ key: String, from writer: ChangeBroadcaster) -> EventLoopFuture<Bool> {
        let existed = RemovalOutcome()
        return send(query: PostgreSQLStatements.remove(namespace: name, channel: channel, key: key), from: writer) { commit in
            let removed = !(commit.removedKeys ?? []).isEmpty
            existed.value.store(removed, ordering: .releasing)
            return removed ? [.remove(key)] : []
        }.map { existed.value.load(ordering: .acquiring) }
    }

    /// Removes each key of `expected` (valid, canonical) that still holds the value given for it,
    /// for the instance of `writer`; the future tells which it removed. The server's bytes of the
    /// keys are read and compared with the values here (as `==` compares them); then each key
    /// whose bytes matched is removed only if it still holds those very bytes, in one statement.
    func removeUnchanged(_ expected: [String: DefaultsValue], from writer: ChangeBroadcaster) -> EventLoopFuture<[String]> {
        let removed = RemovedKeys()
        return session.run(PostgreSQLStatements.storedValues(namespace: name, keys: Array(expected.keys)))
            .flatMapThrowing { try PostgreSQLStatements.storedValues($0) }
            .flatMap { stored -> EventLoopFuture<Void> in
                let unchanged = stored.filter { key, bytes in
                    let value = bytes.withUnsafeBytes { try? BinaryValueCodec.decode($0) }
                    return value != nil && value == expected[key]
                }
                guard !unchanged.isEmpty else { return self.session.eventLoop.makeSucceededVoidFuture() }
                let query = PostgreSQLStatements.removeUnchanged(
                    namespace: self.name, channel: self.channel, keys: unchanged.map(\.key), values: unchanged.map(\.bytes))
                return self.send(query: query, from: writer) { commit in
                    let keys = (commit.removedKeys ?? []).compactMap { String(validating: $0, as: UTF8.self) }
                    removed.keys.withLock { $0 = keys }
                    return keys.map { .remove($0) }
                }
            }
            .map { removed.keys.withLock { $0 } }
    }

    /// Writes `changes` (valid, canonical, each key once) for the instance of `writer` only if
    /// each key of `expected` (canonical) holds the value given for it (`nil`: none) when they
    /// commit; the future tells whether it wrote. The server's bytes of the keys are read and
    /// compared with the values here (as `==` compares them); the write then commits only if
    /// those very bytes are still there and no other write of the namespace came between, else it
    /// starts again from the read, until `deadline` (then it fails as busy).
    func write(
        _ changes: [DefaultsChange], ifUnchanged expected: [(key: String, value: DefaultsValue?)], from writer: ChangeBroadcaster,
        deadline: NIODeadline
    ) -> EventLoopFuture<Bool> {
        let eventLoop = session.eventLoop
        return session.run(PostgreSQLStatements.storedValues(namespace: name, keys: expected.map(\.key)))
            .flatMapThrowing { try PostgreSQLStatements.storedValues($0) }
            .flatMap { stored -> EventLoopFuture<Bool> in
                let held = Dictionary(stored.map { ($0.key, $0.bytes) }, uniquingKeysWith: { first, _ in first })
                var bytes: [[UInt8]] = []
                for (key, value) in expected {
                    let current = held[key].flatMap { stored in stored.withUnsafeBytes { try? BinaryValueCodec.decode($0) } }
                    guard current == value, (held[key] == nil) == (value == nil) else { return eventLoop.makeSucceededFuture(false) }
                    bytes.append(held[key] ?? [])
                }
                // Nothing to write: the condition held when it was read, which is its answer.
                guard !changes.isEmpty else { return eventLoop.makeSucceededFuture(true) }
                let query = PostgreSQLStatements.writeIfUnchanged(
                    namespace: self.name, channel: self.channel, changes: changes, expectedKeys: expected.map(\.key), expectedBytes: bytes)
                let outcome = RemovalOutcome()
                return self.send({ $0.run(query).map(\.rows) }, decode: PostgreSQLStatements.conditionalCommit, from: writer) { commit in
                    outcome.value.store(commit.conditionHeld, ordering: .releasing)
                    return commit.conditionHeld ? changes : []
                }.flatMap { () -> EventLoopFuture<Bool> in
                    if outcome.value.load(ordering: .acquiring) { return eventLoop.makeSucceededFuture(true) }
                    guard NIODeadline.now() < deadline else {
                        return eventLoop.makeFailedFuture(
                            DefaultsError.postgres(.busy, "Other clients kept writing the namespace: the conditional write found it changed at every try until its time limit; nothing was written."))
                    }
                    return self.write(changes, ifUnchanged: expected, from: writer, deadline: deadline)
                }
            }
    }

    /// The keys a compare-and-remove removed, told by the commit to the caller.
    private final class RemovedKeys: Sendable {
        let keys = Mutex<[String]>([])
    }

    /// Whether a removal removed something (or a conditional write wrote), told by the commit to
    /// the caller.
    private final class RemovalOutcome: Sendable {
        let value = Atomic<Bool>(false)
    }

    private func send(
        query: PostgresQuery, from writer: ChangeBroadcaster, changes: @escaping @Sendable (PostgreSQLStatements.Commit) -> [DefaultsChange]
    ) -> EventLoopFuture<Void> {
        send({ $0.run(query).map(\.rows) }, decode: PostgreSQLStatements.commit, from: writer, changes: changes)
    }

    /// Sends a write (`run` sends it on the session), numbered like the catch-ups, and folds in
    /// the changes it committed (its answer read by `decode`).
    private func send(
        _ run: (PostgreSQLSession) -> EventLoopFuture<[PostgresRow]>,
        decode: @escaping @Sendable ([PostgresRow]) throws -> PostgreSQLStatements.Commit, from writer: ChangeBroadcaster,
        changes: @escaping @Sendable (PostgreSQLStatements.Commit) -> [DefaultsChange]
    ) -> EventLoopFuture<Void> {
        let (ticket, answer) = state.withLock { state in
            state.nextTicket += 1
            state.writesInFlight.insert(state.nextTicket)
            return (state.nextTicket, run(session))
        }
        let folded = answer
            .flatMapError { error in self.session.eventLoop.makeFailedFuture(Self.writeError(error)) }
            .flatMapThrowing { try decode($0) }
            .flatMap { commit in self.committed(commit, changes: changes(commit), writer: writer) }
        // A catch-up that came back first may be applied once the commit is folded in (its pending
        // entry recorded, if it came after a gap) or failed: the callbacks above run in the tick
        // the answer arrives, so the next tick is after them.
        answer.whenComplete { _ in self.session.eventLoop.execute { self.writeSettled(ticket) } }
        return folded
    }

    /// Folds a commit into the replica: at once if nothing came between it and what is known,
    /// else after a catch-up has read the commits in between (so that events keep commit order).
    private func committed(
        _ commit: PostgreSQLStatements.Commit, changes: [DefaultsChange], writer: ChangeBroadcaster
    ) -> EventLoopFuture<Void> {
        let eventLoop = session.eventLoop
        if commit.revision % Self.markerRetention == 0 {
            _ = session.run(PostgreSQLStatements.prune(namespace: name, through: commit.revision - Self.markerRetention))
        }
        let waiter = state.withLock { state -> EventLoopPromise<Void>? in
            if let events = state.replica.commit(revision: commit.revision, writer: ObjectIdentifier(writer), changes: changes) {
                state.folds += 1
                distribute(events, &state)
                return nil
            }
            let promise = eventLoop.makePromise(of: Void.self)
            state.commitWaiters[commit.revision, default: []].append(promise)
            return promise
        }
        guard let waiter else { return eventLoop.makeSucceededVoidFuture() }
        catchUp()
        return waiter.futureResult
    }

    /// What a failed write reports: a connection lost or a time limit passed while the statement
    /// was out leaves its outcome unknown.
    private static func writeError(_ error: any Error) -> any Error {
        if error is DefaultsError { return error }
        let failure = PostgreSQLFailure(error)
        if error is PostgreSQLTimeout || failure.isConnectionLoss {
            return DefaultsError.postgres(
                .ioFailure,
                "The connection was lost during the write (\(failure.reason)): it may or may not have been committed; the store shows which once it has reconnected.",
                cause: failure)
        }
        return error
    }

    // MARK: Events

    /// Queues `events` for every instance, in order: `.local` for the one that wrote them. Call
    /// under the lock, so that events of successive commits queue in commit order.
    private func distribute(_ events: [PostgreSQLReplica.Event], _ state: inout State) {
        guard !events.isEmpty else { return }
        for (id, member) in state.members {
            guard let broadcaster = member.broadcaster else { continue }
            broadcaster.enqueue(
                events.lazy.map { DefaultsChangeEvent(key: $0.key, newValue: $0.value, origin: $0.writer == id ? .local : .external) })
        }
    }

    /// Delivers the queued events of every instance on this thread. Call without holding a lock.
    func deliverPending() {
        for broadcaster in state.withLock({ $0.members.values.compactMap(\.broadcaster) }) {
            broadcaster.deliverPending()
        }
    }

    /// Delivers the queued events off the event loop.
    private func deliverLater() {
        Self.delivery.async { self.deliverPending() }
    }
}
