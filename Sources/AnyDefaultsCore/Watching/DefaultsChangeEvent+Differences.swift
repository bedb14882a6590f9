package extension DefaultsChangeEvent {
    /// The events that turn `old` into `new`, as seen from outside (`.external`), in the UTF-8
    /// order of their keys: a file replaced by another process does not tell in which order its
    /// keys changed, and a fixed order makes what observers see repeatable.
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

    /// This event with another origin.
    func with(origin: Origin) -> DefaultsChangeEvent {
        var event = self
        event.origin = origin
        return event
    }
}
