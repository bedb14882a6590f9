/// A change that happened to one key of a store.
///
/// Providers report one event for each key whose stored value actually changed, in the order the
/// changes were committed; a write that stores the value already held, or the removal of an
/// absent key, reports nothing.
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

    /// Creates an event.
    public init(key: String, newValue: DefaultsValue?, origin: Origin = .local) {
        self.key = key
        self.newValue = newValue
        self.origin = origin
    }
}
