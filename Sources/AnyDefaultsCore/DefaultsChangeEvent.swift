/// A change that happened to one key of a store.
///
/// Providers report one event for each key whose stored value actually changed, in the order the
/// changes were committed; a write that stores the value already held, or the removal of an
/// absent key, reports nothing.
///
/// Events that reach you through a ``Defaults`` carry a ``sequence`` number: the store's changes
/// numbered 1, 2, 3… in the order they were committed, which a consumer keeps to resume where it
/// stopped (``Defaults/changes(after:limit:)``). Two events are equal when their key, value and
/// origin are; the sequence number is where an event stands, not what it says.
public struct DefaultsChangeEvent: Sendable, Hashable {
    /// Where a change was made.
    public enum Origin: Sendable, Hashable {
        /// Through this provider instance.
        case local
        /// Elsewhere: another instance on the same storage, or another process.
        case external
    }

    /// The key that changed.
    public var key: String
    /// The value the key holds now, or `nil` if it was removed.
    public var newValue: DefaultsValue?
    /// Where the change was made.
    public var origin: Origin
    /// The change's position among the changes of its store, as the ``Defaults`` that delivered
    /// it numbers them (1 for the first change it saw, then one more for each): increasing by one
    /// per change, in commit order, with no gap, for as long as the `Defaults` lives. `0` for an
    /// event that no `Defaults` numbered (one a provider's own ``DefaultsProvider/observe(_:)``
    /// delivers).
    public var sequence: UInt64

    /// Creates an event.
    public init(key: String, newValue: DefaultsValue?, origin: Origin = .local, sequence: UInt64 = 0) {
        self.key = key
        self.newValue = newValue
        self.origin = origin
        self.sequence = sequence
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.key == rhs.key && lhs.newValue == rhs.newValue && lhs.origin == rhs.origin
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(newValue)
        hasher.combine(origin)
    }
}
