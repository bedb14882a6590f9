import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps track of the transactions open in one environment, so that the map can be resized (or the
/// environment closed) only when none is, as LMDB requires of `mdb_env_set_mapsize`.
///
/// Every transaction runs between an `enter` and a `leave`. ``exclusive(closing:_:)`` holds new
/// transactions back, waits for the open ones to end, and runs its body alone.
///
/// The gate also keeps a few idle read transactions, one per slot: renewing a reset transaction is
/// much cheaper than beginning one, and with `MDB_NOTLS` a reset transaction keeps its reader slot
/// but pins no snapshot. Reads are the hot path, so one atomic word holds a bit per busy slot and
/// the exclusive flag: a reader enters with one compare-and-swap and leaves with one atomic AND.
/// Writers, and readers that find every slot busy, are counted in `unpooled`.
///
/// `@unchecked Sendable` because of `transactions`, a fixed buffer with one entry per slot: entry
/// `i` is only touched by the thread that set bit `i` in `state`, until it clears the bit (or, after
/// closing, by the closing thread, which holds every bit). The atomic orders those accesses.
/// LMDB allows a read transaction to move between threads when the environment has `MDB_NOTLS`,
/// as long as one thread at a time uses it.
final class LMDBTransactionGate: @unchecked Sendable {
    struct Closed: Error {}

    /// A pooled read transaction lent out by ``enterReader()``.
    struct Slot {
        fileprivate let index: Int
        /// The slot's transaction: reset while the slot is free, `nil` if none was begun yet.
        var transaction: OpaquePointer?
    }

    /// How many read transactions (and so LMDB reader slots) the pool keeps at most.
    static let slotCount = 16
    private static let allSlots: UInt64 = (1 << slotCount) - 1
    private static let exclusiveBit: UInt64 = 1 << 63

    /// A bit per busy slot, and ``exclusiveBit``.
    private let state = Atomic<UInt64>(0)
    private let transactions: UnsafeMutablePointer<OpaquePointer?>
    /// Open transactions that are not in a slot: writers, and readers when every slot is busy.
    private let unpooled = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    /// Held for the whole of an exclusive section; callers that must wait for one block on it.
    private let exclusiveSection = Mutex(())

    init() {
        transactions = .allocate(capacity: Self.slotCount)
        transactions.initialize(repeating: nil, count: Self.slotCount)
    }

    deinit {
        transactions.deallocate()
    }

    /// Registers a read transaction about to begin. Returns a slot, whose transaction the caller
    /// renews (or begins, if it has none) and hands back with ``leave(_:)``, or `nil` if every slot
    /// is busy: the caller then begins its own transaction and calls ``leaveUnpooled()``.
    func enterReader() throws(Closed) -> Slot? {
        var current = state.load(ordering: .relaxed)
        while true {
            if current & Self.exclusiveBit != 0 {
                try waitForExclusiveSection()
                current = state.load(ordering: .relaxed)
                continue
            }
            let free = ~current & Self.allSlots
            if free == 0 {
                if try enterUnpooledIfOpen() { return nil }
                continue
            }
            let index = free.trailingZeroBitCount
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: current | 1 << UInt64(index), ordering: .acquiringAndReleasing)
            if exchanged { return Slot(index: index, transaction: transactions[index]) }
            current = original
        }
    }

    /// Registers a transaction that is not pooled (a write transaction) about to begin.
    func enterUnpooled() throws(Closed) {
        while try !enterUnpooledIfOpen() {}
    }

    /// Gives back a slot with its reset transaction (or `nil`, if it was aborted).
    func leave(_ slot: Slot) {
        transactions[slot.index] = slot.transaction
        state.bitwiseAnd(~(1 << UInt64(slot.index)), ordering: .releasing)
    }

    /// Registers the end of a transaction begun after ``enterUnpooled()`` or a `nil` from
    /// ``enterReader()``.
    func leaveUnpooled() {
        unpooled.subtract(1, ordering: .releasing)
    }

    /// Counts an unpooled transaction in, unless an exclusive section is pending (then it waits
    /// for that to end and returns `false`). The increment and the check of the flag, against the
    /// exclusive section's setting of the flag and reading of the count, make sure one of the two
    /// sees the other.
    private func enterUnpooledIfOpen() throws(Closed) -> Bool {
        unpooled.add(1, ordering: .sequentiallyConsistent)
        if state.load(ordering: .sequentiallyConsistent) & Self.exclusiveBit == 0 { return true }
        unpooled.subtract(1, ordering: .sequentiallyConsistent)
        try waitForExclusiveSection()
        return false
    }

    private func waitForExclusiveSection() throws(Closed) {
        exclusiveSection.withLock { _ in }
        if closed.load(ordering: .acquiring) { throw Closed() }
    }

    /// Runs `body` while no transaction is open and none can begin. The caller must not be inside
    /// a transaction itself. With `closing`, the gate stays closed afterwards and `body` receives
    /// the pooled read transactions to abort. Returns `nil`, without running `body`, once closed.
    @discardableResult
    func exclusive<T, E: Error>(
        closing: Bool = false, _ body: ([OpaquePointer]) throws(E) -> T
    ) throws(E) -> T? {
        try exclusiveSection.withLock { _ throws(E) -> T? in
            guard !closed.load(ordering: .acquiring) else { return nil }
            state.bitwiseOr(Self.exclusiveBit, ordering: .sequentiallyConsistent)
            defer { if !closing { state.bitwiseAnd(~Self.exclusiveBit, ordering: .sequentiallyConsistent) } }
            // Open transactions last one call each (never across an `await`), so yielding, then
            // sleeping briefly, is enough.
            var rounds = 0
            while state.load(ordering: .sequentiallyConsistent) & Self.allSlots != 0
                || unpooled.load(ordering: .sequentiallyConsistent) > 0
            {
                rounds += 1
                if rounds < 64 { sched_yield() } else { usleep(100) }
            }
            guard closing else { return try body([]) }
            closed.store(true, ordering: .releasing)
            // No slot is busy and none can be taken any more: the pooled transactions are ours.
            let pooled = (0..<Self.slotCount).compactMap { transactions[$0] }
            transactions.update(repeating: nil, count: Self.slotCount)
            return try body(pooled)
        }
    }
}
