import AnyDefaultsCore
import Synchronization

import AnyDefaultsPlatform

/// An in-memory upstream that counts what reaches it, can fail on demand, can be changed behind
/// the cache's back (with an external event, a local one, or none), and can pause or jitter
/// inside its calls to widen race windows.
final class SpyProvider: DefaultsProvider {
    static let backend = "Spy"

    struct Counts: Sendable, Equatable {
        var reads = 0
        var allValues = 0
        /// Every batch that reached `apply`, single writes included.
        var batches: [[DefaultsChange]] = []
        /// Calls of `makeDurable()`.
        var madeDurable = 0
        var writes: Int { batches.count }
    }

    /// Called inside a read after the value was read, before it is returned.
    typealias ReadHook = @Sendable (_ key: String, _ value: DefaultsValue?) -> Void
    /// Called inside `apply` before or after the batch is committed.
    typealias CommitHook = @Sendable (_ changes: [DefaultsChange]) -> Void

    private struct State {
        var values: [String: DefaultsValue]
        var counts = Counts()
        var failingWrites = 0
    }

    private struct Hooks {
        var afterRead: ReadHook?
        var beforeCommit: CommitHook?
        var afterCommit: CommitHook?
    }

    private let state: Mutex<State>
    private let hooks = Mutex(Hooks())
    private let broadcaster = ChangeBroadcaster()
    private let jitter: Bool
    private let reportsChanges: Bool

    /// - Parameters:
    ///   - jitter: sleep or yield a little inside every read and write, after the store was read
    ///     or changed, so that overlapping calls interleave in many ways.
    ///   - reportsChanges: whether observers hear of changes; a provider need not report any.
    ///   - capabilities: what it claims; `.multiProcess` stands for a store other processes write,
    ///     whose writes ``silentWrite(_:_:)`` plays.
    init(_ values: [String: DefaultsValue] = [:], jitter: Bool = false, reportsChanges: Bool = true, capabilities: DefaultsCapabilities = [.atomicBatch]) {
        state = Mutex(State(values: values))
        self.jitter = jitter
        self.reportsChanges = reportsChanges
        self.capabilities = capabilities
    }

    let capabilities: DefaultsCapabilities

    var counts: Counts { state.withLock { $0.counts } }

    /// What the store holds, without counting a read or running hooks.
    func stored(_ key: String) -> DefaultsValue? { state.withLock { $0.values[key] } }

    func failNextWrites(_ count: Int) { state.withLock { $0.failingWrites = count } }

    func onRead(_ hook: ReadHook?) { hooks.withLock { $0.afterRead = hook } }

    func onCommit(_ hook: CommitHook?) { hooks.withLock { $0.afterCommit = hook } }

    func beforeCommit(_ hook: CommitHook?) { hooks.withLock { $0.beforeCommit = hook } }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        let value = state.withLock { state in
            state.counts.reads += 1
            return state.values[key]
        }
        hooks.withLock { $0.afterRead }?(key, value)
        pause()
        return value
    }

    func keys() throws(DefaultsError) -> [String] {
        state.withLock { Array($0.values.keys) }
    }

    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        state.withLock { state in
            state.counts.allValues += 1
            return state.values
        }
    }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        hooks.withLock { $0.beforeCommit }?(changes)
        try state.withLock { state throws(DefaultsError) in
            state.counts.batches.append(changes)
            if state.failingWrites > 0 {
                state.failingWrites -= 1
                throw DefaultsError(.ioFailure, "Injected failure.", backend: Self.backend, key: changes.first?.key)
            }
            commit(changes, origin: .local, to: &state)
        }
        broadcaster.deliverPending()
        hooks.withLock { $0.afterCommit }?(changes)
        pause()
    }

    func makeDurable() throws(DefaultsError) {
        state.withLock { $0.counts.madeDurable += 1 }
    }

    /// Changes the store as another process would: the cache hears of it as an external event.
    func externalWrite(_ key: String, _ value: DefaultsValue?) {
        state.withLock { commit([value.map { .set(key, $0) } ?? .remove(key)], origin: .external, to: &$0) }
        broadcaster.deliverPending()
    }

    /// Changes several keys as another process's batch would: committed together, then reported
    /// as external events one by one.
    func externalApply(_ changes: [DefaultsChange]) {
        state.withLock { commit(changes, origin: .external, to: &$0) }
        broadcaster.deliverPending()
    }

    /// Changes the store without any event, as an unobservable change would.
    func silentWrite(_ key: String, _ value: DefaultsValue?) {
        state.withLock { $0.values[key] = value }
    }

    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        broadcaster.observe(handler)
    }

    private func commit(_ changes: [DefaultsChange], origin: DefaultsChangeEvent.Origin, to state: inout State) {
        var events: [DefaultsChangeEvent] = []
        for change in changes where state.values[change.key] != change.value {
            state.values[change.key] = change.value
            events.append(DefaultsChangeEvent(key: change.key, newValue: change.value, origin: origin))
        }
        if reportsChanges { broadcaster.enqueue(events) }
    }

    private func pause() {
        guard jitter else { return }
        if Bool.random() {
            sched_yield()
        } else {
            usleep(UInt32.random(in: 1...40))
        }
    }
}
