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
}
