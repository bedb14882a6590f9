/// What a subscription publishes: how to learn that the value may have changed, and how to read
/// it. Every publisher of this module is one of these behind a ``DefaultsSubscription``.
struct PublicationSource<Output: Sendable>: Sendable {
    /// Calls `changed` after each change that may alter the value, until the observation ends.
    let observe: @Sendable (_ changed: @escaping @Sendable () -> Void) -> DefaultsObservation
    /// The value now, and its mark: equal marks mean the same value.
    let read: @Sendable () -> (Output, PublicationMark)
}

/// Identifies a published value, so that a value equal to the last one is not published again,
/// whatever the type of the value (which need not be `Equatable`).
enum PublicationMark: Hashable, Sendable {
    /// A value in its stored form (`nil` for an absent value): values that a store would hold
    /// alike are equal, whatever the store held before (an absent key that reads as its default
    /// `0` and a stored `0` publish once).
    case stored(DefaultsValue?)
    /// A snapshot: equal snapshots hold equal values.
    case snapshot(DefaultsSnapshot)
    /// A value that has no stored form to compare (a mocked property's value that cannot be
    /// encoded, or a property's publication number): unequal to every other.
    case sequence(UInt64)
}

extension PublicationMark {
    /// The mark of `value` in its stored form; `nil` if it has none (it cannot be encoded).
    static func encoding<Value: DefaultsSerializable>(_ value: Value) -> PublicationMark? {
        if let optional = value as? any OptionalValue, optional.isNone { return .stored(nil) }
        return (try? value.defaultsValue).map { .stored($0) }
    }
}

/// Recognises `Optional` in generic code, to tell a `nil` (stored as an absent key) from a value
/// that cannot be encoded.
private protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    fileprivate var isNone: Bool { self == nil }
}
