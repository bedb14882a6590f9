import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// Subscriptions honour demand: a subscriber that asks for one value at a time gets one at a time,
/// and the newest value while it was not asking.
@Suite struct DemandTests {
    @Test func aSubscriberAskingForOneAtATimeGetsOneAtATimeAndTheLatest() {
        let defaults = Defaults(MemoryProvider())
        let subscriber = StepSubscriber<Int>(initialDemand: .max(1))
        defaults.publisher(for: .count).subscribe(subscriber)
        #expect(subscriber.values == [0])

        defaults[.count] = 1
        defaults[.count] = 2
        defaults[.count] = 3
        #expect(subscriber.values == [0])  // no demand: nothing delivered
        subscriber.request(1)
        #expect(subscriber.values == [0, 3])  // the latest, once
        subscriber.request(1)
        #expect(subscriber.values == [0, 3])  // nothing new to deliver
        defaults[.count] = 4
        #expect(subscriber.values == [0, 3, 4])  // the outstanding demand is met at once
        defaults[.count] = 5
        defaults[.count] = 3  // back to a value delivered earlier, but not the last one
        subscriber.request(2)
        #expect(subscriber.values == [0, 3, 4, 3])
        defaults[.count] = 9
        #expect(subscriber.values == [0, 3, 4, 3, 9])
        subscriber.cancel()
        #expect(subscriber.completions == 0)  // a publisher of settings never finishes
    }

    @Test func noDemandAtFirstMeansNothingUntilAsked() {
        let defaults = Defaults(MemoryProvider())
        defaults[.count] = 7
        let subscriber = StepSubscriber<Int>(initialDemand: .none)
        defaults.publisher(for: .count).subscribe(subscriber)
        defaults[.count] = 8
        defaults[.count] = 7  // back to the value read on subscription: still one value to give
        #expect(subscriber.values.isEmpty)
        subscriber.request(5)
        #expect(subscriber.values == [7])
        subscriber.cancel()
    }

    /// A subscriber that returns more demand from `receive(_:)`, writes to the store from inside
    /// it, and is fed from several threads, is called one value at a time and ends on the store's
    /// last value.
    @Test func deliveryIsSerialAndReentrantWritesAreDelivered() {
        let defaults = Defaults(MemoryProvider())
        let subscriber = StepSubscriber<Int>(initialDemand: .unlimited)
        defaults.publisher(for: .count).subscribe(subscriber)
        // A second subscriber that normalizes the value: its own write is delivered after the
        // current value, to both, without recursion.
        let clamp = defaults.publisher(for: .count).sink { count in
            if count > 100 { defaults[.count] = 100 }
        }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<50 { defaults[.count] = thread * 1_000 + step }
        }
        defaults[.count] = 500
        #expect(waitUntil { subscriber.values.last == 100 })
        #expect(subscriber.overlaps == 0)
        #expect(defaults[.count] == 100)
        let values = subscriber.values
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 != $1 }, "a value repeated: \(values)")
        clamp.cancel()
        subscriber.cancel()
    }

    @Test func requestAndCancelFromInsideReceiveAreSafe() {
        let defaults = Defaults(MemoryProvider())
        let received = Recorder<Int>()
        let box = CancellableBox()
        box.cancellable = defaults.publisher(for: .count).sink { count in
            received.record(count)
            if count == 2 { box.cancel() }
        }
        for count in 1...5 { defaults[.count] = count }
        #expect(received.all == [0, 1, 2])
    }
}

/// Holds a cancellable that a sink may cancel from inside its own closure.
// @unchecked Sendable: the cancellable is set once before any value can call `cancel()`, and
// `AnyCancellable.cancel()` may be called from any thread.
final class CancellableBox: @unchecked Sendable {
    var cancellable: AnyCancellable?

    func cancel() {
        cancellable?.cancel()
    }
}
