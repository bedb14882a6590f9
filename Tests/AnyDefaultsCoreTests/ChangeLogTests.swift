import AnyDefaultsCore
import Foundation
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

    @Test func eachProcessHasItsOwnOrigin() {
        #expect(ChangeLog.processOrigin == ChangeLog.processOrigin)
        #expect(ChangeLog.processOrigin >> 32 == Int64(getpid()))
    }
}
