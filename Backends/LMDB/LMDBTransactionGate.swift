import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An `MDB_txn` pointer passed between the gate's pool and the one call using it.
///
/// `@unchecked Sendable` is safe because a transaction is only ever used by one thread at a time:
/// an idle (reset) read transaction belongs to the pool, behind the gate's `Mutex`, until one call
/// takes it out; that call uses it synchronously on its own thread and either returns it to the pool
/// or aborts it. LMDB allows this for read transactions when the environment has `MDB_NOTLS`.
struct LMDBTransactionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Keeps track of the transactions open in one environment, so that the map can be resized (or the
/// environment closed) only when none is, as LMDB requires of `mdb_env_set_mapsize`.
///
/// Every transaction runs between ``enter(reader:)`` and ``leave(keeping:)``. ``exclusive(_:)``
/// holds new transactions back, waits for the open ones to end, and runs its body alone. It also
/// pools idle, reset read transactions: renewing one is much cheaper than beginning a new one, and
/// with `MDB_NOTLS` a reset transaction keeps its reader slot but pins no snapshot.
final class LMDBTransactionGate: Sendable {
    struct Closed: Error {}

    private struct State {
        var active = 0
        var exclusive = false
        var closed = false
        var idle: [LMDBTransactionHandle] = []
    }

    private enum Entry {
        case closed
        case wait
        case entered(LMDBTransactionHandle?)
    }

    /// How many idle read transactions (and so reader slots) the pool keeps at most.
    static let idleLimit = 16

    private let state = Mutex(State())
    /// Held for the whole of an exclusive section; callers that must wait for one block on it.
    private let exclusiveSection = Mutex(())

    /// Registers a transaction about to begin; for a reader, hands out an idle read transaction to
    /// renew, if the pool has one.
    func enter(reader: Bool) throws(Closed) -> LMDBTransactionHandle? {
        while true {
            let entry = state.withLock { state -> Entry in
                if state.closed { return .closed }
                if state.exclusive { return .wait }
                state.active += 1
                return .entered(reader ? state.idle.popLast() : nil)
            }
            switch entry {
            case .closed: throw Closed()
            case .wait: exclusiveSection.withLock { _ in }
            case .entered(let idle): return idle
            }
        }
    }

    /// Registers the end of a transaction. A reset read transaction passed as `idle` goes back to
    /// the pool; if the pool is full or the gate closed, it is returned for the caller to abort.
    func leave(keeping idle: LMDBTransactionHandle?) -> LMDBTransactionHandle? {
        state.withLock { state in
            state.active -= 1
            guard let idle else { return nil }
            if state.closed || state.idle.count >= Self.idleLimit { return idle }
            state.idle.append(idle)
            return nil
        }
    }

    /// Runs `body` while no transaction is open and none can begin. The caller must not be inside
    /// a transaction itself. With `closing`, the gate stays closed afterwards and `body` receives
    /// the pooled read transactions to abort. Returns `nil`, without running `body`, once closed.
    @discardableResult
    func exclusive<T, E: Error>(
        closing: Bool = false, _ body: ([LMDBTransactionHandle]) throws(E) -> T
    ) throws(E) -> T? {
        try exclusiveSection.withLock { _ throws(E) -> T? in
            let open = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.exclusive = true
                return true
            }
            guard open else { return nil }
            waitUntilIdle()
            var pooled: [LMDBTransactionHandle] = []
            if closing {
                pooled = state.withLock { state in
                    state.closed = true
                    defer { state.idle.removeAll() }
                    return state.idle
                }
            }
            defer { state.withLock { $0.exclusive = false } }
            return try body(pooled)
        }
    }

    /// Waits for the open transactions to end. They are short (one call each, never across an
    /// `await`), so yielding, then sleeping briefly, is enough.
    private func waitUntilIdle() {
        var rounds = 0
        while state.withLock({ $0.active }) > 0 {
            rounds += 1
            if rounds < 64 { sched_yield() } else { usleep(100) }
        }
    }
}
