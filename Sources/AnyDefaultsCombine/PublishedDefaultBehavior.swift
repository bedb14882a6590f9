/// When a ``PublishedDefault`` property publishes a new value, relative to the moment the
/// property itself reads it.
public enum PublishedDefaultBehavior: Sendable, Hashable {
    /// After: the property already reads the new value when subscribers receive it, as with a
    /// `CurrentValueSubject`. The default.
    case didSet
    /// Before: subscribers receive the new value while the property still reads the old one, as
    /// with `@Published` (which publishes in `willSet`).
    case willSet
}
