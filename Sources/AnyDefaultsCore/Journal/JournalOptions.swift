/// How a ``JournaledProvider``'s journal is sized and when it is applied to the store.
///
/// ```swift
/// let options = JournalOptions(capacity: 4 << 20, flushInterval: .milliseconds(200))
/// ```
public struct JournalOptions: Sendable, Hashable {
    /// The journal's size in bytes: when it is full, a write applies it to the store first.
    public var capacity: Int
    /// How long after a write the journal is applied to the store (a power loss can lose
    /// writes this recent).
    public var flushInterval: Duration

    public init(capacity: Int = 1 << 20, flushInterval: Duration = .seconds(1)) {
        self.capacity = capacity
        self.flushInterval = flushInterval
    }
}
