import AnyDefaultsCombine
import Foundation
import Synchronization
import Testing

enum Theme: String, DefaultsSerializable { case light, dark }

extension DefaultsKeys {
    static let volume = DefaultsKey<Double>("volume", default: 0.5)
    static let muted = DefaultsKey<Bool>("muted", default: false)
    static let theme = DefaultsKey<Theme>("theme", default: .light)
    static let count = DefaultsKey<Int>("count", default: 0)
    static let tags = DefaultsKey<[String]>("tags", default: [])
}

/// Whether this code runs on the main queue, where the main actor runs (under `swift test` on
/// Linux a worker thread drains it, not the main thread).
func isOnMainQueue() -> Bool {
    DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// A subscriber that asks for `initialDemand` values, then for more only when told to, and checks
/// that it is never called from two threads at once.
// @unchecked Sendable: every field is behind `state`'s mutex; the subscription is only used
// through `request` and `cancel`, which Combine subscriptions accept from any thread.
final class StepSubscriber<Input: Sendable>: Subscriber, @unchecked Sendable {
    typealias Failure = Never

    private struct State {
        var values: [Input] = []
        var subscription: Held<any Subscription>?
        var receiving = false
        var overlaps = 0
        var completions = 0
    }

    private let state = Mutex(State())
    private let initialDemand: Subscribers.Demand

    init(initialDemand: Subscribers.Demand = .max(1)) {
        self.initialDemand = initialDemand
    }

    func receive(subscription: any Subscription) {
        let held = Held(subscription)
        state.withLock { $0.subscription = held }
        if initialDemand > 0 { subscription.request(initialDemand) }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        let overlapping = state.withLock { state in
            defer { state.receiving = true }
            return state.receiving
        }
        if overlapping { state.withLock { $0.overlaps += 1 } }
        usleep(200)  // long enough for a concurrent call to show
        state.withLock { state in
            state.values.append(input)
            state.receiving = false
        }
        return .none
    }

    func receive(completion: Subscribers.Completion<Never>) {
        state.withLock { $0.completions += 1 }
    }

    /// Asks for `count` more values.
    func request(_ count: Int) {
        state.withLock { $0.subscription }?.value.request(.max(count))
    }

    func cancel() {
        let subscription = state.withLock { state in
            defer { state.subscription = nil }
            return state.subscription
        }
        subscription?.value.cancel()
    }

    var values: [Input] { state.withLock { $0.values } }
    /// How many times `receive(_:)` was entered while another call was still in it.
    var overlaps: Int { state.withLock { $0.overlaps } }
    var completions: Int { state.withLock { $0.completions } }
    /// The subscription, for checking that it is released.
    var subscriptionObject: AnyObject? { state.withLock { $0.subscription }.map { $0.value as AnyObject } }
}

/// Carries a Combine value (not `Sendable`) across threads in these tests.
// @unchecked Sendable: used only for subscriptions and cancellables, whose `request` and `cancel`
// Combine and OpenCombine accept from any thread.
struct Held<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
