import Synchronization

/// An observer that a ``CachingProvider`` calls itself with each event, together with the read
/// slot of the event's key when it has one, which holds the key path ``Defaults`` observes the
/// key by: the events of a `Defaults` over its cache take one hop from the upstream to it, and
/// its Observation needs no lookup of the key path (see Docs/Performance.md, "Eighth step").
///
/// A class whose subclass overrides ``receive(_:slot:)``, rather than a closure: the cache calls
/// it without counting a reference to a closure's context on every write.
// @unchecked: not final, so that a subclass receives the events; its one stored property is an
// `Atomic`, and the one subclass (`DefaultsEventSink`) adds only immutable `Sendable` references.
class CacheDirectObserver: @unchecked Sendable {
    /// Whether it is still registered: a delivery under way took the list of observers before a
    /// cancellation, and must not call a cancelled one.
    private let isActive = Atomic(true)

    /// Receives an event and its key's read slot, if it has one (unretained: valid while the
    /// cache lives, see ``CacheState/absorb(_:)``).
    func receive(_ event: DefaultsChangeEvent, slot: Unmanaged<CacheReadSlot>?) {}

    @inline(__always)
    final func callAsFunction(_ event: DefaultsChangeEvent, _ slot: Unmanaged<CacheReadSlot>?) {
        if isActive.load(ordering: .acquiring) { receive(event, slot: slot) }
    }

    /// Stops the calls, but one whose delivery had begun on another thread.
    final func deactivate() {
        isActive.store(false, ordering: .releasing)
    }
}
