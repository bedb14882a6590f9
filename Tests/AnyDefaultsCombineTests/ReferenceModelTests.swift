import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// Random sequences of writes, removals, batches, registrations and requests for more values,
/// checked against a reference model of what a subscriber must receive: the current value, then
/// each new value while it asks for them, and the latest one when it asks again, never twice in a
/// row. The seed is printed with any failure.
@Suite struct ReferenceModelTests {
    /// What a subscriber must have received, given the values the key read as after each step.
    struct Model {
        var received: [Int?] = []
        var demand = 0
        var pending: Int??
        var last: Int??

        /// The key now reads as `value`.
        /// The key now reads as `value`: it waits to be delivered, unless the subscriber has it
        /// (or is about to get it) already.
        mutating func changed(to value: Int?) {
            if let latest = pending ?? last, latest == value { return }
            if let last, last == value {
                pending = nil
            } else {
                pending = .some(value)
            }
            deliver()
        }

        mutating func request(_ count: Int) {
            demand += count
            deliver()
        }

        private mutating func deliver() {
            guard demand > 0, let value = pending else { return }
            received.append(value)
            last = value
            pending = nil
            demand -= 1
        }
    }

    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 20_261_125]

    @Test(arguments: Backend.all, seeds)
    func aStepSubscriberGetsWhatTheModelSays(_ backend: Backend, seed: UInt64) throws {
        try backend.withStore { defaults, _ in
            var random = SeededGenerator(seed: seed)
            let subscriber = StepSubscriber<Int?>(initialDemand: .max(1))
            var model = Model(demand: 1)
            let key = "n"
            defaults.publisher(forKey: key, as: Int.self).subscribe(subscriber)
            model.changed(to: nil)
            var steps: [String] = []
            for _ in 0..<120 {
                let value = Int.random(in: 0..<4, using: &random)
                switch Int.random(in: 0..<7, using: &random) {
                case 0, 1:
                    defaults.set(value, forKey: key)
                    steps.append("set \(value)")
                case 2:
                    defaults.removeObject(forKey: key)
                    steps.append("remove")
                case 3:
                    try defaults.write { tx in
                        tx.set(value, forKey: key)
                        tx.set(value, forKey: "other")
                    }
                    steps.append("batch \(value)")
                case 4:
                    defaults.set(value, forKey: "other")  // another key
                    steps.append("other \(value)")
                case 5:
                    defaults.set(Double(value), forKey: key)  // a Double holding a whole number reads as Int
                    steps.append("double \(value)")
                default:
                    let count = Int.random(in: 1..<3, using: &random)
                    subscriber.request(count)
                    model.request(count)
                    steps.append("request \(count)")
                }
                // Local writes are delivered by the writing thread before the write returns,
                // unless another thread is delivering; wait for this one to land.
                let now = defaults.value(Int.self, forKey: key)
                model.changed(to: now)
                #expect(waitUntil { subscriber.values == model.received }, "seed \(seed) after \(steps)")
                if subscriber.values != model.received { break }
            }
            Thread.sleep(forTimeInterval: 0.05)
            #expect(subscriber.values == model.received, "seed \(seed): a late value")
            #expect(subscriber.overlaps == 0)
            subscriber.cancel()
        }
    }
}
