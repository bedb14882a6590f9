import CLMDB
import Synchronization

import AnyDefaultsPlatform

/// Keeps track of the transactions open in one environment, so that the map can be resized (or the
/// environment closed) only when none is, as LMDB requires of `mdb_env_set_mapsize`.
///
/// Every transaction runs between an `enter` and a `leave`. ``exclusive(closing:_:)`` holds new
/// transactions back, waits for the open ones to end, and runs its body alone.
///
/// The gate also keeps a few idle read transactions, one per slot: renewing a reset transaction is
/// much cheaper than beginning one, and with `MDB_NOTLS` a reset transaction keeps its reader slot
/// but pins no snapshot. Reads are the hot path, so each slot has its own busy flag on its own
/// cache line: a reader enters with one compare-and-swap (and a load of the exclusive flag) and
/// leaves with a plain releasing store. Writers, and readers that find every slot busy, are
/// counted in `unpooled`.
///
/// Entering checks the exclusive flag after marking itself busy; the exclusive section sets the
/// flag before it checks the busy marks. With sequentially consistent operations on both sides,
/// one of the two always sees the other.
///
/// `@unchecked Sendable` because of the slots' raw memory: a slot's transaction is only touched by
/// the thread that set the slot's busy flag, until it clears it (or, once closed, by the closing
/// thread, which waited for every flag to clear and keeps new readers out). The flag orders those
/// accesses. LMDB allows a read transaction to move between threads when the environment has
/// `MDB_NOTLS`, as long as one thread at a time uses it.
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
    /// Bytes per slot: a cache line, so that readers on different slots do not contend.
    private static let slotStride = 64

    /// Per slot, at `index * slotStride`: the busy flag, then the transaction.
    private let slots: UnsafeMutableRawPointer
    /// Open transactions that are not in a slot: writers, and readers when every slot is busy.
    private let unpooled = Atomic<Int>(0)
    private let exclusiveRequested = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    /// Held for the whole of an exclusive section; callers that must wait for one block on it.
    private let exclusiveSection = Mutex(())

    init() {
        slots = .allocate(byteCount: Self.slotCount * Self.slotStride, alignment: Self.slotStride)
        for index in 0..<Self.slotCount {
            (slots + index * Self.slotStride).initializeMemory(as: Atomic<Bool>.self, to: Atomic(false))
            transaction(index).initialize(to: nil)
        }
    }

    deinit {
        for index in 0..<Self.slotCount {
            _ = busy(index).move()
        }
        slots.deallocate()
    }

    @inline(__always)
    private func busy(_ index: Int) -> UnsafeMutablePointer<Atomic<Bool>> {
        (slots + index * Self.slotStride).assumingMemoryBound(to: Atomic<Bool>.self)
    }

    @inline(__always)
    private func transaction(_ index: Int) -> UnsafeMutablePointer<OpaquePointer?> {
        (slots + index * Self.slotStride + 8).assumingMemoryBound(to: OpaquePointer?.self)
    }

    /// Registers a read transaction about to begin. Returns a slot, whose transaction the caller
    /// renews (or begins, if it has none) and hands back with ``leave(_:)``, or `nil` if every slot
    /// is busy: the caller then begins its own transaction and calls ``leaveUnpooled()``.
    @inline(__always)
    func enterReader() throws(Closed) -> Slot? {
        while true {
            for index in 0..<Self.slotCount
            where busy(index).pointee.compareExchange(
                expected: false, desired: true, ordering: .sequentiallyConsistent
            ).exchanged {
                if !exclusiveRequested.load(ordering: .sequentiallyConsistent) {
                    return Slot(index: index, transaction: transaction(index).pointee)
                }
                busy(index).pointee.store(false, ordering: .releasing)
                break
            }
            if !exclusiveRequested.load(ordering: .sequentiallyConsistent), try enterUnpooledIfOpen() {
                return nil
            }
            try waitForExclusiveSection()
        }
    }

    /// Registers a transaction that is not pooled (a write transaction) about to begin.
    func enterUnpooled() throws(Closed) {
        while try !enterUnpooledIfOpen() {}
    }

    /// Gives back a slot with its reset transaction (or `nil`, if it was aborted).
    @inline(__always)
    func leave(_ slot: Slot) {
        transaction(slot.index).pointee = slot.transaction
        busy(slot.index).pointee.store(false, ordering: .releasing)
    }

    /// Registers the end of a transaction begun after ``enterUnpooled()`` or a `nil` from
    /// ``enterReader()``.
    func leaveUnpooled() {
        unpooled.subtract(1, ordering: .releasing)
    }

    /// Counts an unpooled transaction in, unless an exclusive section is pending (then it waits
    /// for that to end and returns `false`).
    private func enterUnpooledIfOpen() throws(Closed) -> Bool {
        unpooled.add(1, ordering: .sequentiallyConsistent)
        if !exclusiveRequested.load(ordering: .sequentiallyConsistent) { return true }
        unpooled.subtract(1, ordering: .sequentiallyConsistent)
        try waitForExclusiveSection()
        return false
    }

    private func waitForExclusiveSection() throws(Closed) {
        exclusiveSection.withLock { _ in }
        if closed.load(ordering: .acquiring) { throw Closed() }
    }

    /// Runs `body` while no transaction is open and none can begin. The caller must not be inside
    /// a transaction itself. With `closing`, the gate stays closed afterwards; with `closing` or
    /// `takingPool`, `body` receives the pooled read transactions to abort (they belong to the
    /// environment being closed). Returns `nil`, without running `body`, once closed.
    @discardableResult
    func exclusive<T, E: Error>(
        closing: Bool = false, takingPool: Bool = false, _ body: ([OpaquePointer]) throws(E) -> T
    ) throws(E) -> T? {
        try exclusiveSection.withLock { _ throws(E) -> T? in
            guard !closed.load(ordering: .acquiring) else { return nil }
            exclusiveRequested.store(true, ordering: .sequentiallyConsistent)
            defer { if !closing { exclusiveRequested.store(false, ordering: .sequentiallyConsistent) } }
            // Open transactions last one call each (never across an `await`), so yielding, then
            // sleeping briefly, is enough.
            var rounds = 0
            while unpooled.load(ordering: .sequentiallyConsistent) > 0
                || (0..<Self.slotCount).contains(where: { busy($0).pointee.load(ordering: .sequentiallyConsistent) })
            {
                rounds += 1
                if rounds < 64 { sched_yield() } else { usleep(100) }
            }
            guard closing || takingPool else { return try body([]) }
            if closing { closed.store(true, ordering: .releasing) }
            // No slot is busy and none can be taken until this section ends: the pooled
            // transactions are ours.
            var pooled: [OpaquePointer] = []
            for index in 0..<Self.slotCount {
                if let pointer = transaction(index).pointee { pooled.append(pointer) }
                transaction(index).pointee = nil
            }
            return try body(pooled)
        }
    }
}
