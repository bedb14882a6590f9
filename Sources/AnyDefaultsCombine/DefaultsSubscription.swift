import Synchronization

/// The subscription of every publisher in this module: the current value first, then the value
/// after each change, as the subscriber asks for them.
///
/// - **Order**: it observes first and then reads, and every read takes a ticket; a read that
///   finishes after a later-started one is dropped, so a value never replaces a newer one.
/// - **Repeats**: a value whose mark equals the one the subscriber has (or is about to get) is
///   not published.
/// - **Demand**: while the subscriber asks for nothing, only the latest value waits; it is
///   delivered when demand arrives (the latest value wins, as for `CurrentValueSubject`).
/// - **Serial delivery**: one thread delivers at a time, without holding the lock, so that a
///   subscriber may request, cancel or write to the store from inside `receive(_:)`; values that
///   arrive meanwhile are delivered by that thread when `receive(_:)` returns.
/// - **Cancel** drops the observation, the source (and with it the store) and the subscriber.
// @unchecked Sendable: every mutable field is in `state`, behind its mutex. The subscriber, which
// need not be Sendable, is only called by the one thread that holds `state.delivering` (so never
// concurrently, as Combine requires), and only released (never called) by `cancel()`.
final class DefaultsSubscription<Downstream: Subscriber>: Subscription, Refreshing, @unchecked Sendable
where Downstream.Failure == Never, Downstream.Input: Sendable {
    typealias Output = Downstream.Input

    private struct State {
        var downstream: UncheckedSendable<Downstream>?
        var source: PublicationSource<Output>?
        var observation: DefaultsObservation?
        var demand = Subscribers.Demand.none
        /// The latest value not yet delivered.
        var pending: (value: Output, mark: PublicationMark)?
        /// The mark of the value delivered last.
        var delivered: PublicationMark?
        var delivering = false
        var nextTicket: UInt64 = 0
        var acceptedTicket: UInt64 = 0

        /// The next value to deliver and the subscriber, if a value is due; sets `delivering`.
        /// A thread that is not already the deliverer gets nothing while another one is.
        mutating func takeDue(asDeliverer: Bool) -> (UncheckedSendable<Downstream>, Output)? {
            if delivering, !asDeliverer { return nil }
            guard let downstream, demand > 0, let (value, mark) = pending else {
                if asDeliverer { delivering = false }
                return nil
            }
            delivering = true
            pending = nil
            delivered = mark
            demand -= 1
            return (downstream, value)
        }
    }

    private let state: Mutex<State>

    init(_ downstream: Downstream, source: PublicationSource<Output>) {
        state = Mutex(State(downstream: UncheckedSendable(downstream), source: source))
    }

    /// Starts observing and reads the current value, which waits for the subscriber's demand.
    func start() {
        guard let source = state.withLock({ $0.source }) else { return }
        // Through an existential: a closure that captured `self` would capture the subscriber's
        // type, which need not be Sendable.
        let observation = source.observe { [weak target = self as any Refreshing] in target?.refresh() }
        let started = state.withLock { state in
            guard state.source != nil else { return false }
            state.observation = observation
            return true
        }
        guard started else { return observation.cancel() }
        refresh()
    }

    func request(_ demand: Subscribers.Demand) {
        // Combine asks for a positive demand; a zero one adds nothing.
        guard demand > 0 else { return }
        state.withLock { state in
            if state.downstream != nil { state.demand += demand }
        }
        drain()
    }

    func cancel() {
        let (observation, source, downstream) = state.withLock { state in
            defer {
                state.observation = nil
                state.source = nil
                state.downstream = nil
                state.pending = nil
            }
            return (state.observation, state.source, state.downstream)
        }
        observation?.cancel()
        // Released here, outside the lock: the store and the subscriber may go with them.
        withExtendedLifetime((source, downstream)) {}
    }

    /// Reads the value and offers it to the subscriber.
    func refresh() {
        let ticketed = state.withLock { state -> (PublicationSource<Output>, UInt64)? in
            guard let source = state.source else { return nil }
            state.nextTicket += 1
            return (source, state.nextTicket)
        }
        guard let (source, ticket) = ticketed else { return }
        let (value, mark) = source.read()
        state.withLock { state in
            guard state.source != nil, ticket > state.acceptedTicket else { return }
            state.acceptedTicket = ticket
            if mark == (state.pending?.mark ?? state.delivered) { return }
            // Back to what the subscriber has: nothing to deliver.
            state.pending = mark == state.delivered ? nil : (value, mark)
        }
        drain()
    }

    /// Delivers what is due, unless another thread is delivering (it then delivers this too).
    private func drain() {
        var due = state.withLock { $0.takeDue(asDeliverer: false) }
        while let (downstream, value) = due {
            let more = downstream.value.receive(value)
            due = state.withLock { state in
                if state.downstream != nil { state.demand += more }
                return state.takeDue(asDeliverer: true)
            }
        }
    }
}

/// Something to tell that its value may have changed.
protocol Refreshing: AnyObject, Sendable {
    func refresh()
}

/// Carries a value that is not `Sendable` through a mutex; see the proof where it is used.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
