import Synchronization

/// The observers of every provider instance open on one file, suite or environment in this process.
///
/// Each instance keeps its own ``ChangeBroadcaster``; a committed change is queued on all of them,
/// as `.local` for the instance that made it and `.external` for the others, so a second instance
/// on the same storage hears about the first one's writes.
package final class InstanceListeners: Sendable {
    private struct State {
        var nextID = 0
        var broadcasters: [Int: ChangeBroadcaster] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Adds an instance's broadcaster and returns the instance's identifier.
    package func register(_ broadcaster: ChangeBroadcaster) -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.broadcasters[state.nextID] = broadcaster
            return state.nextID
        }
    }

    /// Removes an instance that is going away.
    package func unregister(_ id: Int) {
        _ = state.withLock { $0.broadcasters.removeValue(forKey: id) }
    }

    /// Whether any instance has an observer.
    package var hasObservers: Bool {
        state.withLock { $0.broadcasters.values.contains(where: \.hasObservers) }
    }

    /// Queues `external` (changes made outside this process's instances) and then `events` for
    /// every instance, the latter as `.local` for `writer` and `.external` for the others. Call it
    /// under the lock that orders the storage's commits, and deliver after releasing it.
    ///
    /// - Returns: Every instance's broadcaster, to deliver to; none when there was nothing to queue.
    @discardableResult
    package func enqueue(
        _ events: [DefaultsChangeEvent], from writer: Int?, after external: [DefaultsChangeEvent] = []
    ) -> [ChangeBroadcaster] {
        guard !events.isEmpty || !external.isEmpty else { return [] }
        return state.withLock { state in
            for (id, broadcaster) in state.broadcasters where broadcaster.hasObservers {
                if !external.isEmpty { broadcaster.enqueue(external.lazy.map { $0.with(origin: .external) }) }
                let origin: DefaultsChangeEvent.Origin = id == writer ? .local : .external
                broadcaster.enqueue(events.lazy.map { $0.with(origin: origin) })
            }
            return Array(state.broadcasters.values)
        }
    }

    /// Delivers what was queued on every instance. Call it after releasing the storage's lock.
    package func deliverPending() {
        for broadcaster in state.withLock({ Array($0.broadcasters.values) }) {
            broadcaster.deliverPending()
        }
    }
}
