/// What a ``Defaults`` does with each event of its provider: tells Observation that the key
/// changed, then numbers the event and hands it to the store's observers (``ChangeFeed``).
final class DefaultsEventSink: CacheDirectObserver, @unchecked Sendable {
    private let tracker: ObservationTracker
    private let feed: ChangeFeed

    init(tracker: ObservationTracker, feed: ChangeFeed) {
        self.tracker = tracker
        self.feed = feed
    }

    /// `slot` is the key's read slot in the cache, whose key path for Observation saves looking
    /// it up; unretained, valid for the call.
    override func receive(_ event: DefaultsChangeEvent, slot: Unmanaged<CacheReadSlot>?) {
        if let slot {
            slot._withUnsafeGuaranteedRef { tracker.didChange(event.key, keyPath: $0.observationKey) }
        } else {
            tracker.didChange(event.key, keyPath: nil)
        }
        feed.publish(event)
    }
}
