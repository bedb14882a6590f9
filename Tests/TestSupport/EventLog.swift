import AnyDefaultsCore

/// Records every change event of a provider, from its creation for as long as it lives.
///
/// ```swift
/// let log = EventLog(store)
/// try store.setValue(.int(1), forKey: "a")
/// #expect(log.all == [DefaultsChangeEvent(key: "a", newValue: .int(1))])
/// ```
public final class EventLog: Sendable {
    private let recorder = Recorder<DefaultsChangeEvent>()
    private let observation: DefaultsObservation

    public init(_ provider: some DefaultsProvider) {
        let recorder = recorder
        observation = provider.observe { recorder.record($0) }
    }

    /// Every event so far.
    public var all: [DefaultsChangeEvent] { recorder.all }

    /// The keys of every event so far.
    public var keys: [String] { all.map(\.key) }

    /// Every event once there are at least `count`, or when `timeout` has passed.
    public func wait(for count: Int, timeout: Duration = .patience) -> [DefaultsChangeEvent] {
        recorder.wait(for: count, timeout: timeout)
    }

    /// Every event after waiting `settle` for late arrivals, once there are at least `count` (or
    /// `timeout` has passed); as ``Recorder/settled(at:settle:timeout:)``.
    public func settled(at count: Int, settle: Duration = .milliseconds(150), timeout: Duration = .patience) -> [DefaultsChangeEvent] {
        recorder.settled(at: count, settle: settle, timeout: timeout)
    }
}
