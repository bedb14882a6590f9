import Synchronization

/// A stored property of an `@ObservableDefaults` class: its key (relative to the model's
/// prefix) and its default. The macro adds one per stored property, `_$name`.
///
/// The typed key with the model's prefix is made on first use, once: the prefix is chosen when
/// the model is created, after its properties' defaults are set.
public final class ObservableDefaultsProperty<Value: DefaultsSerializable>: Sendable {
    /// The key, after the model's prefix.
    public let name: String
    /// The value read while nothing is stored.
    public let defaultValue: Value
    @usableFromInline let fullKey = AtomicLazyReference<DefaultsKey<Value>>()

    /// A property stored under `name`, reading `defaultValue` while nothing is stored.
    public init(name: String, defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }

    /// The typed key: `name` after `prefix`, with the default.
    @inlinable
    public func key(prefix: String) -> DefaultsKey<Value> {
        if let key = fullKey.load() { return key }
        return makeKey(prefix: prefix)
    }

    @usableFromInline
    func makeKey(prefix: String) -> DefaultsKey<Value> {
        fullKey.storeIfNil(DefaultsKey(prefix + name, default: defaultValue))
    }
}
