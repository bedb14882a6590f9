import AnyDefaultsCore
import Foundation
import Synchronization
import Testing

@Suite struct ChangeLogTests {
    typealias Entry = ChangeLog.Entry

    @Test func readingKeepsTheOrderOfLastChangesAndLeavesOutTheReadersOwn() {
        let mine: Int64 = 1
        let entries = [
            Entry(sequence: 10, key: "seen", origin: 9), Entry(sequence: 11, key: "a", origin: 9),
            Entry(sequence: 12, key: "b", origin: 9), Entry(sequence: 13, key: "own", origin: mine),
            Entry(sequence: 14, key: "a", origin: 9), Entry(sequence: 15, key: "", origin: 9),
        ]
        #expect(ChangeLog.read(entries, after: 10, skipping: mine) == .init(keys: ["b", "a"], complete: true, end: 15))
        // The entry at the position was pruned, the next one is there: nothing is missing.
        #expect(ChangeLog.read(Array(entries.dropFirst()), after: 10, skipping: mine).complete)
    }

    @Test func readingSpotsEntriesThatAreGone() {
        let mine: Int64 = 1
        // Entries after the position were pruned before the reader read them.
        let gap = ChangeLog.read([Entry(sequence: 12, key: "b", origin: 9)], after: 10, skipping: mine)
        #expect(gap == .init(keys: ["b"], complete: false, end: 12))
        // The log was emptied and restarted: only its newest entry came back, older than the position.
        #expect(ChangeLog.read([Entry(sequence: 3, key: "x", origin: 9)], after: 14, skipping: mine)
            == .init(keys: ["x"], complete: false, end: 3))
        #expect(ChangeLog.read([], after: 14, skipping: mine) == .init(keys: [], complete: false, end: 0))
        #expect(ChangeLog.read([], after: 0, skipping: mine) == .init(keys: [], complete: true, end: 0))
    }

    @Test func aLeaseIsRenewedAfterAQuarterAndNotesWhenItLapsed() throws {
        var lease = ChangeLog.Lease(takenAt: 1000)
        var renewals: [Int64] = []
        try lease.keep(now: 1010) { renewals.append($0) }
        #expect(renewals == [])
        try lease.keep(now: 1000 + ChangeLog.leaseSeconds / 4) { renewals.append($0) }
        #expect(renewals == [1000 + ChangeLog.leaseSeconds / 4 + ChangeLog.leaseSeconds])
        #expect(!lease.lapsed)
        // Suspended past its end: renewed, and the next reading cannot trust the log.
        let late = lease.end + 30
        try lease.keep(now: late) { renewals.append($0) }
        #expect(renewals.last == late + ChangeLog.leaseSeconds)
        #expect(lease.lapsed)
    }

    /// A watch that started without its lease tries again after 100 ms, then after twice the
    /// wait each time, until the attempt says the lease is taken.
    @Test func anUntakenLeaseIsTriedAgainWithGrowingWaitsUntilTaken() async {
        let attempts = Mutex<[ContinuousClock.Instant]>([])
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            ChangeLog.Lease.retryUntilTaken {
                let count = attempts.withLock { $0.append(.now); return $0.count }
                if count == 4 { done.resume() }
                return count < 4
            }
        }
        // No fifth attempt once one reported the lease taken.
        try? await Task.sleep(for: .seconds(1.2))
        let times = attempts.withLock { $0 }
        #expect(times.count == 4)
        guard times.count == 4 else { return }
        let waits = zip([start] + times.dropLast(), times).map { $1 - $0 }
        for (wait, least) in zip(waits, [0.1, 0.2, 0.4, 0.8]) {
            #expect(wait >= .seconds(least), "waits \(waits)")
        }
    }

    @Test func eachProcessHasItsOwnOrigin() {
        #expect(ChangeLog.processOrigin == ChangeLog.processOrigin)
        #expect(ChangeLog.processOrigin >> 32 == Int64(getpid()))
    }
}
