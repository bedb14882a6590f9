import AnyDefaultsCore
import Synchronization
import Testing

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
