import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Change streams for long-lived consumers (issue 27.5): sequence numbers, bounded buffers, and
/// resuming after a position from the store's change history, or being told that it cannot.
@Suite struct ResumableChangesTests {
    /// Reads `count` events from `stream` (failing after a while rather than hanging).
    static func take(_ count: Int, from stream: AsyncStream<DefaultsChangeEvent>) async -> [DefaultsChangeEvent] {
        await withTaskGroup(of: [DefaultsChangeEvent].self) { group in
            group.addTask {
                var events: [DefaultsChangeEvent] = []
                for await event in stream {
                    events.append(event)
                    if events.count == count { break }
                }
                return events
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return []
            }
            let first = await group.next() ?? []
            group.cancelAll()
            return first
        }
    }

    @Test(arguments: Backend.allCases) func eventsAreNumberedInCommitOrderWithoutGaps(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let stream = defaults.changes()
        let scoped = defaults.scoped("t/").changes()
        defaults.set(1, forKey: "a")
        defaults.set(2, forKey: "t/b")
        try defaults.write { tx in
            tx.set(3, forKey: "c")
            tx.set(4, forKey: "t/d")
        }
        defaults.removeObject(forKey: "a")
        let events = await Self.take(5, from: stream)
        let first = try #require(events.first?.sequence)
        #expect(events.map(\.sequence) == Array(first..<first + 5))
        #expect(events.map(\.key) == ["a", "t/b", "c", "t/d", "a"] || Set(events[2...3].map(\.key)) == ["c", "t/d"])
        // A scoped view sees the store's numbers, for its keys only, without the prefix.
        let inScope = await Self.take(2, from: scoped)
        #expect(inScope.map(\.key) == ["b", "d"])
        #expect(inScope.map(\.sequence) == events.filter { $0.key.hasPrefix("t/") }.map(\.sequence))
        #expect(defaults.changePosition.sequence == first + 4)
    }

    @Test(arguments: Backend.allCases) func aConsumerResumesAfterItsLastEventWithoutGapOrRepeat(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults.retainChangeHistory(100)
        let first = defaults.changes(after: defaults.changePosition)
        #expect(first.isResumed)
        for index in 1...5 { defaults.set(index, forKey: "k\(index)") }
        let seen = await Self.take(3, from: first.events)
        let position = defaults.position(of: try #require(seen.last))
        // The client goes away; changes go on; it comes back with its Last-Event-ID.
        for index in 6...7 { defaults.set(index, forKey: "k\(index)") }
        let resumed = defaults.changes(after: DefaultsChangePosition(position.description))
        #expect(resumed.isResumed)
        defaults.set(8, forKey: "k8")
        let rest = await Self.take(5, from: resumed.events)
        #expect(rest.map(\.key) == ["k4", "k5", "k6", "k7", "k8"])
        #expect(rest.map(\.sequence) == Array(position.sequence + 1...position.sequence + 5))
    }

    @Test func aPositionTheHistoryNoLongerHoldsIsNotResumedButNewChangesFlow() async throws {
        let defaults = Defaults(MemoryProvider())
        defaults.retainChangeHistory(3)
        let start = defaults.changePosition
        for index in 1...10 { defaults.set(index, forKey: "k\(index)") }
        let old = defaults.changes(after: start)
        #expect(!old.isResumed, "ten changes happened; the history keeps three")
        let recent = defaults.changes(after: DefaultsChangePosition(epoch: start.epoch, sequence: start.sequence + 7))
        #expect(recent.isResumed)
        // Another numbering (another Defaults, another process), no position, a position ahead.
        let other = Defaults(MemoryProvider())
        #expect(!defaults.changes(after: other.changePosition).isResumed)
        #expect(!defaults.changes(after: nil).isResumed)
        #expect(!defaults.changes(after: DefaultsChangePosition(epoch: start.epoch, sequence: 99)).isResumed)
        #expect(DefaultsChangePosition("not a position") == nil)
        defaults.set(11, forKey: "k11")
        #expect(await Self.take(1, from: old.events).map(\.key) == ["k11"])
        #expect(await Self.take(4, from: recent.events).map(\.key) == ["k8", "k9", "k10", "k11"])
    }

    @Test func aResumableStreamEndsRatherThanDropAndTheRestIsReplayed() async throws {
        let defaults = Defaults(MemoryProvider())
        defaults.retainChangeHistory(100)
        let changes = defaults.changes(after: defaults.changePosition, limit: 4)
        for index in 1...10 { defaults.set(index, forKey: "k\(index)") }
        var read: [DefaultsChangeEvent] = []
        for await event in changes.events { read.append(event) }  // ends: it could not hold more
        #expect(read.map(\.key) == ["k1", "k2", "k3", "k4"])
        let resumed = defaults.changes(after: defaults.position(of: read[3]))
        #expect(resumed.isResumed)
        #expect(await Self.take(6, from: resumed.events).map(\.key) == (5...10).map { "k\($0)" })
    }

    @Test func aScopedResumptionReplaysItsOwnKeysOnly() async throws {
        let defaults = Defaults(MemoryProvider())
        let acme = defaults.scoped("tenant/acme/")
        let start = acme.changePosition
        acme.retainChangeHistory(50)
        defaults.set(1, forKey: "tenant/other/plan")
        acme.set("gold", forKey: "plan")
        defaults.set(2, forKey: "tenant/other/seats")
        acme.set(10, forKey: "seats")
        let resumed = acme.changes(after: start)
        #expect(resumed.isResumed)
        #expect(await Self.take(2, from: resumed.events).map(\.key) == ["plan", "seats"])
    }

    @Test func theBufferingPolicyKeepsTheNewestOrTheOldest() async throws {
        let defaults = Defaults(MemoryProvider())
        let newest = defaults.changes(buffering: .bufferingNewest(3))
        let oldest = defaults.changes(buffering: .bufferingOldest(3))
        for index in 1...10 { defaults.set(index, forKey: "k\(index)") }
        #expect(await Self.take(3, from: newest).map(\.key) == ["k8", "k9", "k10"])
        #expect(await Self.take(3, from: oldest).map(\.key) == ["k1", "k2", "k3"])
        let values = defaults.values(of: DefaultsKey<Int>("n", default: 0), buffering: .bufferingNewest(1))
        for index in 1...5 { defaults.set(index, forKey: "n") }
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == 5)
    }

    #if os(Linux)
    /// A consumer that never reads holds a bounded number of events: 8000 changes of 64 KiB each
    /// would hold 500 MiB in an unbounded buffer; the default keeps 1024 of them.
    @Test func aConsumerThatNeverReadsDoesNotGrowMemoryWithoutBound() async {
        await #expect(processExitsWith: .success) {
            let defaults = Defaults(MemoryProvider())
            let stuck = defaults.changes()
            let stuckStore = defaults.provider.changes()
            let before = ResidentMemory.megabytes()
            for index in 0..<8000 {
                defaults.set(Data(repeating: UInt8(truncatingIfNeeded: index), count: 64 << 10) + Data([UInt8(index >> 8)]), forKey: "blob")
            }
            let grown = ResidentMemory.megabytes() - before
            withExtendedLifetime((stuck, stuckStore)) {}
            if grown > 300 {
                print("resident memory grew by \(grown) MiB")
                exit(1)
            }
        }
    }
    #endif
}

/// This process's resident memory, from /proc/self/statm.
enum ResidentMemory {
    static func megabytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }  // portability-check: allowed, read where it exists, 0 elsewhere
        let pages = Int(text.split(separator: " ").dropFirst().first ?? "0") ?? 0
        return pages * Int(getpagesize()) >> 20
    }
}
