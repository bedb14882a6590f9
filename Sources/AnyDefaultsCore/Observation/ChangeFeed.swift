import Synchronization

/// What a ``Defaults`` does with its provider's events: numbers them (``DefaultsChangeEvent/sequence``),
/// keeps the newest in a bounded history once someone resumes from it, and hands them to the
/// observers of the `Defaults` and of its scoped views.
///
/// The provider delivers events one at a time, in commit order (its contract,
/// ``DefaultsProvider/observe(_:)``, which the conformance suite checks), so numbers
/// follow commit order without a gap. The history holds at most ``historyLimit`` events; it starts
/// empty when first needed (``Defaults/retainChangeHistory(_:)`` or the first resumption) and holds
/// only what came after.
final class ChangeFeed: Sendable {
    typealias Handler = @Sendable (DefaultsChangeEvent) -> Void

    /// The numbering's random identity (see ``DefaultsChangePosition/epoch``).
    let epoch = UInt64.random(in: 1...UInt64.max)
    /// The sequence number of the last event.
    private let last = Atomic<UInt64>(0)
    /// Whether anyone observes or the history records: when not, an event costs one atomic add.
    private let active = Atomic<Bool>(false)
    private let state = Mutex(State())

    private struct State {
        var nextID = 0
        var handlers: [Int: Handler] = [:]
        /// The newest events, oldest first, at most `historyLimit`.
        var history: [DefaultsChangeEvent] = []
        var historyStart = 0
        var historyLimit = 0
        /// The sequence number of the last event before the history started recording.
        var recordedAfter: UInt64 = 0

        var isActive: Bool { !handlers.isEmpty || historyLimit > 0 }

        mutating func record(_ event: DefaultsChangeEvent) {
            guard historyLimit > 0 else { return }
            if history.count < historyLimit {
                history.append(event)
            } else {
                history[historyStart] = event
                historyStart = (historyStart + 1) % historyLimit
            }
        }

        /// The recorded events after `sequence`, oldest first, if the history holds every one of
        /// them (up to `last`); `nil` if some are gone or were never recorded.
        func events(after sequence: UInt64, last: UInt64) -> [DefaultsChangeEvent]? {
            guard sequence <= last else { return nil }
            if sequence == last { return [] }
            guard historyLimit > 0 else { return nil }
            let ordered = Array(history[historyStart...] + history[..<historyStart])
            let oldest = ordered.first?.sequence ?? last + 1
            // Every event after `sequence` must be recorded: the first missing one is oldest - 1's.
            guard sequence + 1 >= oldest, sequence >= recordedAfter else { return nil }
            return ordered.filter { $0.sequence > sequence }
        }
    }

    /// How many observers are registered: each stream, publisher and `observe` handler of the
    /// `Defaults` (and its scoped views) counts once while it lasts. For tests of their release.
    var observerCount: Int { state.withLock { $0.handlers.count } }

    /// The history's limit, as ``Defaults/retainChangeHistory(_:)`` set it; 0 while it is off.
    var historyLimit: Int { state.withLock { $0.historyLimit } }

    /// The position after the last event so far.
    var position: DefaultsChangePosition {
        DefaultsChangePosition(epoch: epoch, sequence: last.load(ordering: .acquiring))
    }

    /// Numbers `event`, records it and hands it to the observers. Called by the provider's event
    /// delivery, one event at a time.
    func publish(_ event: DefaultsChangeEvent) {
        // Numbered before anything else, and copied only for someone to receive it.
        let sequence = last.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        guard active.load(ordering: .acquiring) else { return }
        var event = event
        event.sequence = sequence
        let handlers = state.withLock { state -> [Handler] in
            state.record(event)
            return Array(state.handlers.values)
        }
        for handler in handlers { handler(event) }
    }

    /// Registers `handler` for every event from now on.
    func observe(_ handler: @escaping Handler) -> DefaultsObservation {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.handlers[state.nextID] = handler
            active.store(true, ordering: .releasing)
            return state.nextID
        }
        return DefaultsObservation { [weak self] in self?.remove(id) }
    }

    /// Registers `handler` for every event after `sequence`: first, at once, the recorded ones
    /// (`replay` gets them inside the lock, so that none is handed to `handler` before them),
    /// then every later one. Returns whether the history held every event after `sequence`
    /// (otherwise nothing is replayed) and the observation.
    func observe(
        after sequence: UInt64, replay: ([DefaultsChangeEvent]) -> Void, _ handler: @escaping Handler
    ) -> (complete: Bool, observation: DefaultsObservation) {
        let (complete, id) = state.withLock { state in
            if state.historyLimit == 0 { startRecording(&state, limit: DefaultsBufferingPolicy.defaultLimit) }
            let recorded = state.events(after: sequence, last: last.load(ordering: .acquiring))
            replay(recorded ?? [])
            defer { state.nextID += 1 }
            state.handlers[state.nextID] = handler
            active.store(true, ordering: .releasing)
            return (recorded != nil, state.nextID)
        }
        return (complete, DefaultsObservation { [weak self] in self?.remove(id) })
    }

    /// Keeps the newest `limit` events from now on (0 stops keeping them).
    func retainHistory(_ limit: Int) {
        state.withLock { state in
            guard max(limit, 0) != state.historyLimit else { return }
            startRecording(&state, limit: max(limit, 0))
            active.store(state.isActive, ordering: .releasing)
        }
    }

    private func startRecording(_ state: inout State, limit: Int) {
        let kept = Array((state.history[state.historyStart...] + state.history[..<state.historyStart]).suffix(limit))
        state.recordedAfter = kept.first.map { $0.sequence - 1 } ?? last.load(ordering: .acquiring)
        state.history = kept
        state.historyStart = 0
        state.historyLimit = limit
        active.store(true, ordering: .releasing)
    }

    private func remove(_ id: Int) {
        state.withLock { state in
            state.handlers.removeValue(forKey: id)
            active.store(state.isActive, ordering: .releasing)
        }
    }
}
