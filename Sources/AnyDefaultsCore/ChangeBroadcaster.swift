import Synchronization

/// Delivers change events to observers in commit order, without holding the provider's locks.
///
/// A provider keeps one broadcaster. While it still holds its own lock it calls ``enqueue(_:)``
/// (cheap, keeps commit order); after releasing the lock it calls ``deliverPending()``. Delivery
/// is serial: if another thread is already delivering, it delivers these events too, and a
/// handler that writes to the provider does not recurse into itself.
///
/// ```swift
/// state.withLock { state in
///     state[key] = value
///     broadcaster.enqueue([DefaultsChangeEvent(key: key, newValue: value)])
/// }
/// broadcaster.deliverPending()
/// ```
public final class ChangeBroadcaster: Sendable {
    public typealias Handler = @Sendable (DefaultsChangeEvent) -> Void

    /// A handler and whether it is still registered: a delivery under way on another thread took
    /// the list of registrations before a cancellation, and must not call a cancelled one for the
    /// events it has yet to deliver.
    @usableFromInline final class Registration: Sendable {
        let handler: Handler
        let isActive = Atomic(true)

        init(_ handler: @escaping Handler) { self.handler = handler }

        @inline(__always)
        func callAsFunction(_ event: DefaultsChangeEvent) {
            if isActive.load(ordering: .acquiring) { handler(event) }
        }
    }

    // Reachable from inlinable code, so that ``enqueue(_:)-(Sequence)`` is specialised for the
    // caller's sequence (unspecialised, appending a lazy sequence costs thousands of instructions).
    @usableFromInline struct State {
        var nextID = 0
        @usableFromInline var handlers: [Int: Registration] = [:] {
            didSet { handlerList = Array(handlers.values) }
        }
        /// The handlers as an array, built when they change rather than for every delivery.
        var handlerList: [Registration] = []
        @usableFromInline var pending: [DefaultsChangeEvent] = []
        var delivering = false

        /// Takes what is queued, with the handlers to give it to. One event (a single write) is
        /// moved out, so that the queue keeps its storage and a write allocates nothing here; a
        /// longer queue is handed over whole.
        fileprivate mutating func takeDelivery() -> Delivery {
            if pending.count == 1 { return .one(pending.removeLast(), handlerList) }
            defer { pending = [] }
            return .many(pending, handlerList)
        }
    }

    /// Events taken from the queue, with the handlers that were registered when they were taken.
    fileprivate enum Delivery {
        case one(DefaultsChangeEvent, [Registration])
        case many([DefaultsChangeEvent], [Registration])

        consuming func deliver() {
            switch consume self {
            case .one(let event, let handlers):
                for handler in handlers { handler(event) }
            case .many(let events, let handlers):
                for event in events {
                    for handler in handlers { handler(event) }
                }
            }
        }
    }

    @usableFromInline let state = Mutex(State())
    /// The number of registered handlers, kept beside `state` so that ``hasObservers`` (asked on
    /// every commit of a store with several instances) and ``publish(_:)-(DefaultsChangeEvent)``
    /// with no one to tell cost one atomic load instead of the lock (a cache whose only observer
    /// is its ``Defaults`` publishes every write's event to no one).
    private let handlerCount = Atomic<Int>(0)

    /// Creates a broadcaster with no observers.
    public init() {}

    /// Whether anyone observes; a provider may skip building events when no one does.
    public var hasObservers: Bool {
        handlerCount.load(ordering: .acquiring) > 0
    }

    /// Registers `handler` for every event delivered from now on. Once the observation is
    /// cancelled, no event reaches `handler` but one whose delivery had already begun on another
    /// thread.
    public func observe(_ handler: @escaping Handler) -> DefaultsObservation {
        let registration = Registration(handler)
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.handlers[id] = registration
            handlerCount.store(state.handlers.count, ordering: .releasing)
            return id
        }
        return DefaultsObservation { [weak self] in
            registration.isActive.store(false, ordering: .releasing)
            self?.state.withLock { state in
                state.handlers.removeValue(forKey: id)
                self?.handlerCount.store(state.handlers.count, ordering: .releasing)
            }
        }
    }

    /// Queues events for delivery. Call it while holding the lock that orders your commits.
    @inlinable
    public func enqueue(_ events: some Sequence<DefaultsChangeEvent>) {
        state.withLock { state in
            guard !state.handlers.isEmpty else { return }
            state.pending.append(contentsOf: events)
        }
    }

    /// Queues one event for delivery. Call it while holding the lock that orders your commits.
    public func enqueue(_ event: DefaultsChangeEvent) {
        state.withLock { state in
            guard !state.handlers.isEmpty else { return }
            state.pending.append(event)
        }
    }

    /// The delivery of one event that the thread which committed it makes itself: returned by
    /// ``enqueueTurn(_:)`` when no other delivery is under way, and given to ``deliver(_:)``.
    public struct Turn: Sendable {
        fileprivate let event: DefaultsChangeEvent
        fileprivate let handlers: [Registration]
    }

    /// ``enqueue(_:)-(DefaultsChangeEvent)`` for a single write: when no delivery is under way
    /// and nothing waits, the event is not queued but returned as this thread's turn to deliver
    /// it, which costs one lock operation less and no copy into the queue. Call it while holding
    /// the lock that orders your commits, then, after releasing it, ``deliver(_:)`` with the turn.
    /// `nil`: no one observes, or the event was queued behind others; ``deliver(_:)`` then
    /// delivers what is queued, unless another thread is already doing so.
    ///
    /// Give every turn you get to ``deliver(_:)``, on every path: until a turn is delivered, the
    /// broadcaster delivers nothing else.
    ///
    /// ```swift
    /// let turn = state.withLock { state in
    ///     state[key] = value
    ///     return broadcaster.enqueueTurn(DefaultsChangeEvent(key: key, newValue: value))
    /// }
    /// broadcaster.deliver(turn)
    /// ```
    public func enqueueTurn(_ event: consuming DefaultsChangeEvent) -> Turn? {
        // Moved into the closure through an optional, so that it is not copied.
        var event = Optional(event)
        return state.withLock { state -> Turn? in
            guard !state.handlers.isEmpty, let event = event.take() else { return nil }
            guard !state.delivering, state.pending.isEmpty else {
                state.pending.append(event)
                return nil
            }
            // Events committed from now on queue behind this one, which is delivered first.
            state.delivering = true
            return Turn(event: event, handlers: state.handlerList)
        }
    }

    /// Delivers the event of `turn`, then whatever was queued meanwhile; for no turn (`nil`),
    /// what is queued, as ``deliverPending()`` does. Call it without holding any lock of yours.
    public func deliver(_ turn: consuming Turn?) {
        guard let turn = consume turn else { return deliverPending() }
        // By index: the array holds the handlers, so calling one counts no reference.
        for index in turn.handlers.indices { turn.handlers[index](turn.event) }
        deliverRest()
    }

    /// Delivers queued events, unless another thread is already doing so (that thread then
    /// delivers them). Call it without holding any lock of yours.
    public func deliverPending() {
        let delivery = state.withLock { state -> Delivery? in
            guard !state.delivering, !state.pending.isEmpty else { return nil }
            state.delivering = true
            return state.takeDelivery()
        }
        guard let delivery else { return }
        delivery.deliver()
        deliverRest()
    }

    /// Delivers what was queued meanwhile, for the thread that is delivering, and ends its turn.
    private func deliverRest() {
        while let delivery = state.withLock({ state -> Delivery? in
            guard !state.pending.isEmpty else {
                state.delivering = false
                return nil
            }
            return state.takeDelivery()
        }) {
            delivery.deliver()
        }
    }

    /// Queues and delivers events at once; for providers whose commits are already ordered.
    @inlinable
    public func publish(_ events: some Sequence<DefaultsChangeEvent>) {
        enqueue(events)
        deliverPending()
    }

    /// Queues and delivers one event at once; for providers whose commits are already ordered.
    public func publish(_ event: DefaultsChangeEvent) {
        // No one to tell: a handler registered concurrently with this call may miss the event,
        // as it would if it had been registered a moment later.
        guard handlerCount.load(ordering: .acquiring) > 0 else { return }
        // The usual case, nothing queued and no delivery under way, takes the lock once before
        // delivering and once after, and leaves the queue alone.
        let handlers = state.withLock { state -> [Registration]? in
            guard !state.handlers.isEmpty else { return [] }
            guard !state.delivering, state.pending.isEmpty else {
                state.pending.append(event)
                return nil
            }
            state.delivering = true
            return state.handlerList
        }
        guard let handlers else { return deliverPending() }
        guard !handlers.isEmpty else { return }
        for handler in handlers { handler(event) }
        deliverRest()
    }
}
