import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite struct ChangeBroadcasterTests {
    @Test func deliversInOrderAndStopsAfterCancel() {
        let broadcaster = ChangeBroadcaster()
        let seen = Mutex<[String]>([])
        let observation = broadcaster.observe { event in seen.withLock { $0.append(event.key) } }
        broadcaster.publish([DefaultsChangeEvent(key: "a", newValue: .int(1)), DefaultsChangeEvent(key: "b", newValue: nil)])
        observation.cancel()
        broadcaster.publish([DefaultsChangeEvent(key: "c", newValue: .int(1))])
        #expect(seen.withLock { $0 } == ["a", "b"])
        #expect(!broadcaster.hasObservers)
    }

    /// An observer cancelled on one thread while another delivers a batch to it gets none of the
    /// batch's later events: the delivery took the list of handlers before the cancellation.
    @Test(.ownThreads, arguments: [1, 2, 100])
    func anObserverCancelledDuringABatchGetsNoneOfItsLaterEvents(batch: Int) {
        let broadcaster = ChangeBroadcaster()
        let inside = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let seen = Mutex<[String]>([])
        let observation = broadcaster.observe { event in
            let first = seen.withLock { seen in
                seen.append(event.key)
                return seen.count == 1
            }
            if first {
                inside.signal()
                proceed.wait()
            }
        }
        let other = broadcaster.observe { _ in }
        defer { other.cancel() }
        // Delivered on a thread of its own, which the first event holds inside the handler.
        Thread.detachNewThread {
            broadcaster.publish((0..<batch).map { DefaultsChangeEvent(key: "k\($0)", newValue: .int(Int64($0))) })
            broadcaster.publish(DefaultsChangeEvent(key: "after", newValue: nil))
            done.signal()
        }
        inside.wait()
        observation.cancel()
        proceed.signal()
        done.wait()
        #expect(seen.withLock { $0 } == ["k0"])
    }

    @Test func releasingTheObservationStopsEvents() {
        let broadcaster = ChangeBroadcaster()
        let count = Mutex(0)
        do {
            let observation = broadcaster.observe { _ in count.withLock { $0 += 1 } }
            broadcaster.publish([DefaultsChangeEvent(key: "a", newValue: nil)])
            _ = observation
        }
        broadcaster.publish([DefaultsChangeEvent(key: "b", newValue: nil)])
        #expect(count.withLock { $0 } == 1)
    }

    /// A handler that publishes again must not recurse: its event is delivered after the current
    /// one, by the same loop.
    @Test func reentrantPublishIsDeliveredAfterwardsWithoutRecursion() {
        let broadcaster = ChangeBroadcaster()
        let log = Mutex<[String]>([])
        let depth = Mutex(0)
        let observation = broadcaster.observe { event in
            let level = depth.withLock { $0 += 1; return $0 }
            log.withLock { $0.append("\(event.key)@\(level)") }
            if event.key == "first" {
                broadcaster.publish([DefaultsChangeEvent(key: "second", newValue: nil)])
            }
            depth.withLock { $0 -= 1 }
        }
        broadcaster.publish([DefaultsChangeEvent(key: "first", newValue: nil)])
        #expect(log.withLock { $0 } == ["first@1", "second@1"])
        observation.cancel()
    }

    /// Commits made on several threads at once, each delivered as its committer's turn
    /// (`enqueueTurn`, `deliver`) or, on some threads, queued (`enqueue`, `deliverPending`): every
    /// event arrives once, in commit order, and no two deliveries overlap.
    @Test(.ownThreads, arguments: [false, true])
    func turnsDeliverEveryCommitOnceInCommitOrder(mixed: Bool) {
        let broadcaster = ChangeBroadcaster()
        let received = Mutex<[Int]>([])
        let inside = Atomic(false)
        let overlapped = Atomic(false)
        let observation = broadcaster.observe { event in
            if inside.exchange(true, ordering: .acquiringAndReleasing) { overlapped.store(true, ordering: .relaxed) }
            received.withLock { $0.append(Int(event.key) ?? -1) }
            inside.store(false, ordering: .releasing)
        }
        defer { observation.cancel() }
        let commits = Mutex(0)
        let threads = 4
        let perThread = 2000
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for _ in 0..<perThread {
                if mixed, thread % 2 == 1 {
                    commits.withLock { count in
                        count += 1
                        broadcaster.enqueue(DefaultsChangeEvent(key: "\(count)", newValue: nil))
                    }
                    broadcaster.deliverPending()
                } else {
                    let turn = commits.withLock { count in
                        count += 1
                        return broadcaster.enqueueTurn(DefaultsChangeEvent(key: "\(count)", newValue: nil))
                    }
                    broadcaster.deliver(turn)
                }
                }
            }
        }
        group.wait()
        #expect(received.withLock { $0 } == Array(1...(threads * perThread)))
        let anyOverlap = overlapped.load(ordering: .relaxed)
        #expect(!anyOverlap)
    }

    /// A turn is taken only when someone observes and no delivery is under way; an event
    /// committed during another thread's turn is delivered by that thread, after the turn's own.
    @Test func aTurnIsTakenOnlyWhenNothingElseDelivers() {
        let broadcaster = ChangeBroadcaster()
        #expect(broadcaster.enqueueTurn(DefaultsChangeEvent(key: "unobserved", newValue: nil)) == nil)
        let seen = Mutex<[String]>([])
        let observation = broadcaster.observe { event in seen.withLock { $0.append(event.key) } }
        defer { observation.cancel() }
        let first = broadcaster.enqueueTurn(DefaultsChangeEvent(key: "first", newValue: nil))
        #expect(first != nil)
        #expect(broadcaster.enqueueTurn(DefaultsChangeEvent(key: "second", newValue: nil)) == nil)
        #expect(seen.withLock { $0 }.isEmpty)
        broadcaster.deliver(first)
        #expect(seen.withLock { $0 } == ["first", "second"])
        // The turn ended: the next commit takes one again.
        let third = broadcaster.enqueueTurn(DefaultsChangeEvent(key: "third", newValue: nil))
        #expect(third != nil)
        broadcaster.deliver(third)
        #expect(seen.withLock { $0 } == ["first", "second", "third"])
        // Behind an event queued and not yet delivered, a commit gets no turn; delivering no turn
        // delivers the queue, in order.
        broadcaster.enqueue(DefaultsChangeEvent(key: "queued", newValue: nil))
        let none = broadcaster.enqueueTurn(DefaultsChangeEvent(key: "behind", newValue: nil))
        #expect(none == nil)
        broadcaster.deliver(none)
        #expect(seen.withLock { $0 } == ["first", "second", "third", "queued", "behind"])
    }

    /// `publish` skips the lock when no one observes (a count kept beside the handlers): the
    /// count follows every registration and cancellation.
    @Test func publishReachesWhoeverObservesAfterCancellations() {
        let broadcaster = ChangeBroadcaster()
        let count = Mutex(0)
        for round in 1...3 {
            let first = broadcaster.observe { _ in count.withLock { $0 += 1 } }
            let second = broadcaster.observe { _ in count.withLock { $0 += 1 } }
            broadcaster.publish(DefaultsChangeEvent(key: "both", newValue: nil))
            first.cancel()
            broadcaster.publish(DefaultsChangeEvent(key: "one", newValue: nil))
            second.cancel()
            broadcaster.publish(DefaultsChangeEvent(key: "none", newValue: nil))
            #expect(count.withLock { $0 } == 3 * round)
            #expect(!broadcaster.hasObservers)
        }
    }
}

