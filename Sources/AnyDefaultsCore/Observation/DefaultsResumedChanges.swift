/// The changes of a store after a position, from ``Defaults/changes(after:limit:)``.
///
/// ```swift
/// let changes = defaults.changes(after: lastSeen)
/// if !changes.isResumed { reload() }
/// for await event in changes.events { handle(event); lastSeen = defaults.position(of: event) }
/// ```
public struct DefaultsResumedChanges: Sendable {
    /// Whether ``events`` starts right after the position asked for (the changes in between came
    /// from the store's change history). When false, the history could not give them (the
    /// position is older than the history, from another process or `Defaults`, or there was
    /// none): the consumer missed changes and must reload what it shows, then go on with
    /// ``events``, which holds every change from the moment of the call on.
    public let isResumed: Bool
    /// The changes, replayed ones first, then new ones as they happen. The stream ends if the
    /// consumer falls behind by more than the call's `limit`; resume after the last event read.
    public let events: AsyncStream<DefaultsChangeEvent>
    /// The store's position when the stream started: with `isResumed` false, a reload read
    /// after the call is at least this recent.
    public let start: DefaultsChangePosition
}
