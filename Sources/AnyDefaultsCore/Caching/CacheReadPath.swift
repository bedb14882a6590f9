import AnyDefaultsPlatform
import Synchronization

/// The lock-free read path of a ``CachingProvider``: typed reads take a key's published answer
/// (``CacheReadSlot``) without the cache's lock, so that reading threads neither wait for each
/// other nor share a written cache line.
///
/// A published answer is a retained object that a write withdraws and must eventually release,
/// while a reader may have just loaded its address. Readers announce themselves in one of
/// several counters (a stripe, chosen by thread) around the load; the cache releases a withdrawn
/// answer only after it saw every stripe empty, after the withdrawal. Both sides use
/// sequentially consistent operations, so either the cache sees the reader's announcement, or
/// the reader's load comes after the withdrawal and cannot find the old answer.
///
/// Each stripe also counts the hits it answered; the cache folds them into its statistics.
// @unchecked: `stripes` is an immutable pointer to memory this object allocates in `init` and
// frees in `deinit`; between the two, the memory is only touched through its atomics.
final class CacheReadPath: @unchecked Sendable {
    /// Never reused, so that a key's remembered slot is never taken for another cache's.
    let id: UInt64
    private let stripes: UnsafeMutablePointer<ReaderStripe>
    /// The upstream's count of every process's commits, checked before each read as the
    /// locked path does.
    private let counter: SharedChangeCounter?
    private let probe: SharedChangeCounter.Probe?

    private static let nextID = Atomic<UInt64>(1)
    private static let stripeCount = 32

    init(counter: SharedChangeCounter?) {
        id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        // Aligned to the stripe's size, so that each stripe has its own cache lines.
        stripes = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<ReaderStripe>.stride * Self.stripeCount, alignment: 128
        ).bindMemory(to: ReaderStripe.self, capacity: Self.stripeCount)
        for index in 0..<Self.stripeCount { (stripes + index).initialize(to: ReaderStripe()) }
        self.counter = counter
        probe = counter?.probe
    }

    deinit {
        stripes.deinitialize(count: Self.stripeCount)
        stripes.deallocate()
    }

    /// The answer published in `slot`: `nil` when none is (take the locked path), `.some(nil)`
    /// for a cached absence.
    @inline(__always)
    func answer(_ slot: Unmanaged<CacheReadSlot>) -> DefaultsValue?? {
        if let probe, !probe.isCurrent { counter?.synchronize() }
        let stripe = stripes + Self.stripeIndex()
        stripe.pointee.word.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let bits = slot._withUnsafeGuaranteedRef { $0.published.load(ordering: .sequentiallyConsistent) }
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else {
            Self.leave(stripe, counting: 0)
            return nil
        }
        let value = Unmanaged<PublishedAnswer>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.value }
        // The copy above holds its own references; only now may the answer go.
        Self.leave(stripe, counting: 1)
        return .some(value)
    }

    /// Leaves the stripe, counting `hits`. Out of line: an opaque call the optimizer cannot
    /// move the reader's copy of the answer past.
    @inline(never)
    private static func leave(_ stripe: UnsafeMutablePointer<ReaderStripe>, counting hits: UInt64) {
        stripe.pointee.word.wrappingAdd((hits << ReaderStripe.hitShift) &- 1, ordering: .sequentiallyConsistent)
    }

    /// Whether no reader is inside any stripe now.
    func isQuiet() -> Bool {
        for index in 0..<Self.stripeCount
        where stripes[index].word.load(ordering: .sequentiallyConsistent) & ReaderStripe.readerMask != 0 {
            return false
        }
        return true
    }

    /// Returns once every stripe was seen empty since the call: no reader that started before
    /// can still hold an answer withdrawn before it. Readers stay inside for a few instructions.
    func waitForReaders() {
        for index in 0..<Self.stripeCount {
            var spins = 0
            while stripes[index].word.load(ordering: .sequentiallyConsistent) & ReaderStripe.readerMask != 0 {
                spins += 1
                if spins % 64 == 0 { sched_yield() }
            }
        }
    }

    /// Takes the hits the stripes counted since the last call.
    func harvestHits() -> Int {
        var total: UInt64 = 0
        for index in 0..<Self.stripeCount {
            let hits = stripes[index].word.load(ordering: .relaxed) >> ReaderStripe.hitShift
            guard hits != 0 else { continue }
            stripes[index].word.wrappingSubtract(hits << ReaderStripe.hitShift, ordering: .relaxed)
            total &+= hits
        }
        return Int(truncatingIfNeeded: total)
    }

    /// The stripe of the calling thread: threads alive together mostly get different ones.
    @inline(__always)
    private static func stripeIndex() -> Int {
        Int(truncatingIfNeeded: (currentThreadToken() &* 0x9E37_79B9_7F4A_7C15) >> 59) & (stripeCount - 1)
    }
}

/// One counter of ``CacheReadPath``, alone on its cache lines: the readers inside (low bits)
/// and the hits answered since the cache last took them (high bits, 40 of them: a cache takes
/// them at each statistics read and every few writes).
struct ReaderStripe: ~Copyable {
    static let hitShift: UInt64 = 24
    static let readerMask: UInt64 = (1 << hitShift) - 1

    let word = Atomic<UInt64>(0)
    // Fills the stripe to 128 bytes: two cache lines, for the adjacent-line prefetch of x86.
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}
