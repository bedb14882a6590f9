/// How many undelivered elements a change stream keeps for a consumer that reads more slowly than
/// the store changes (or not at all), and which it drops beyond that.
///
/// Every stream of ``Defaults`` (``Defaults/changes(buffering:)``, ``Defaults/values(of:buffering:)``,
/// snapshots) and ``DefaultsProvider/changes(buffering:)`` takes one; the default,
/// ``bufferingNewest(_:)`` with ``defaultLimit`` elements, bounds the memory a stuck consumer
/// holds. A consumer that must see every change, however slow, reads ``Defaults/changes(after:limit:)``,
/// which ends instead of dropping and resumes from the store's change history.
///
/// ```swift
/// for await event in defaults.changes(buffering: .bufferingNewest(100)) { … }
/// ```
public enum DefaultsBufferingPolicy: Sendable, Hashable {
    /// Keep the newest `limit` undelivered elements, dropping the oldest: a slow consumer catches
    /// up with the latest state. Dropped events show as a gap in ``DefaultsChangeEvent/sequence``.
    case bufferingNewest(Int)
    /// Keep the oldest `limit` undelivered elements, dropping newer ones until the consumer reads.
    case bufferingOldest(Int)
    /// Keep everything: memory grows without bound while the consumer does not read. Only for
    /// consumers known to keep up.
    case unbounded

    /// The default limit: 1024 elements.
    public static let defaultLimit = 1024

    /// The default policy: ``bufferingNewest(_:)`` with ``defaultLimit``.
    public static let `default` = DefaultsBufferingPolicy.bufferingNewest(defaultLimit)

    /// The same policy for an `AsyncStream`.
    func streamPolicy<Element>(for _: Element.Type = Element.self) -> AsyncStream<Element>.Continuation.BufferingPolicy {
        switch self {
        case .bufferingNewest(let limit): .bufferingNewest(max(limit, 0))
        case .bufferingOldest(let limit): .bufferingOldest(max(limit, 0))
        case .unbounded: .unbounded
        }
    }
}
