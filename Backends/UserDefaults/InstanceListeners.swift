import AnyDefaultsCore
import Synchronization

/// The observers of every provider instance open on one suite in this process.
///
/// Each instance keeps its own ``AnyDefaultsCore/ChangeBroadcaster``; a committed change is queued
/// on all of them, as `.local` for the instance that made it and `.external` for the others, so a
/// second instance on the same suite hears about the first one's writes.
final class InstanceListeners: Sendable {
    private struct State {
        var nextID = 0
        var broadcasters: [Int: ChangeBroadcaster] = [:]
    }

    private let state = Mutex(State())

    /// Adds an instance's broadcaster and returns the instance's identifier.
    func register(_ broadcaster: ChangeBroadcaster) -> Int {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.broadcasters[id] = broadcaster
            return id
        }
    }

    /// Removes an instance that is going away.
    func unregister(_ id: Int) {
        _ = state.withLock { $0.broadcasters.removeValue(forKey: id) }
    }

    /// Queues `events` for every instance. Call it under the lock that orders the suite's commits.
    ///
    /// - Parameter writer: The instance that made the changes, or `nil` for changes made outside
    ///   this process's providers.
    func enqueue(_ events: [DefaultsChangeEvent], from writer: Int?) {
        guard !events.isEmpty else { return }
        let broadcasters = state.withLock { $0.broadcasters }
        for (id, broadcaster) in broadcasters where broadcaster.hasObservers {
            let origin: DefaultsChangeEvent.Origin = id == writer ? .local : .external
            broadcaster.enqueue(events.lazy.map { DefaultsChangeEvent(key: $0.key, newValue: $0.newValue, origin: origin) })
        }
    }

    /// Delivers what was queued. Call it after releasing the suite's lock.
    func deliverPending() {
        for broadcaster in state.withLock({ Array($0.broadcasters.values) }) {
            broadcaster.deliverPending()
        }
    }

    /// The events that turn `old` into `new`, as seen from outside (``DefaultsChangeEvent/Origin-swift.enum/external``),
    /// in key order: a file replaced by another process does not tell in which order its keys
    /// changed, and a fixed order makes what observers see repeatable.
    static func differences(from old: [String: DefaultsValue], to new: [String: DefaultsValue]) -> [DefaultsChangeEvent] {
        var events: [DefaultsChangeEvent] = []
        for (key, value) in new where old[key] != value {
            events.append(DefaultsChangeEvent(key: key, newValue: value, origin: .external))
        }
        for key in old.keys where new[key] == nil {
            events.append(DefaultsChangeEvent(key: key, newValue: nil, origin: .external))
        }
        events.sort { $0.key.utf8Precedes($1.key) }
        return events
    }
}
