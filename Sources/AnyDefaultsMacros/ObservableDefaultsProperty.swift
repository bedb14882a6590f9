import Synchronization

/// A stored property of an `@ObservableDefaults` class: its key (relative to the model's
/// prefix) and its default. The macro adds one per stored property, `_$name`.
///
/// The typed key with the model's prefix is made on first use, once: the prefix is chosen when
/// the model is created, after its properties' defaults are set. It is kept as a retained pointer
/// in an `Atomic`, whose load inlines into the property's getter as one plain load (the standard
/// library's `AtomicLazyReference` is a call and a generic metadata lookup on every read, which
/// measured 0.7× the typed read of `Defaults` on top of it).
public final class ObservableDefaultsProperty<Value: DefaultsSerializable>: Sendable {
    /// The key, after the model's prefix.
    public let name: String
    /// The value read while nothing is stored.
    public let defaultValue: Value
    /// The address of the `DefaultsKey<Value>` once made (0 before), retained; released in
    /// `deinit`. (An address, not a pointer: `Atomic` is `Sendable` only for `Sendable` values.)
    @usableFromInline let fullKey = Atomic<UInt>(0)

    /// A property stored under `name`, reading `defaultValue` while nothing is stored.
    public init(name: String, defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }

    deinit {
        if let key = UnsafeRawPointer(bitPattern: fullKey.load(ordering: .acquiring)) {
            Unmanaged<DefaultsKey<Value>>.fromOpaque(key).release()
        }
    }

    /// The typed key: `name` after `prefix`, with the default.
    @inlinable
    public func key(prefix: String) -> DefaultsKey<Value> {
        withKey(prefix: prefix) { $0 }
    }

    /// Runs `body` with the typed key, without counting a reference to it: the property keeps its
    /// key until it goes, and the model being read keeps the property. (A retain and a release
    /// cost a read about as much as the typed read itself.)
    @inlinable
    func withKey<Result>(prefix: String, _ body: (DefaultsKey<Value>) -> Result) -> Result {
        if let key = UnsafeRawPointer(bitPattern: fullKey.load(ordering: .acquiring)) {
            return Unmanaged<DefaultsKey<Value>>.fromOpaque(key)._withUnsafeGuaranteedRef(body)
        }
        return body(makeKey(prefix: prefix))
    }

    /// Makes the key and keeps it, unless another thread was first: then that one is kept.
    @usableFromInline
    func makeKey(prefix: String) -> DefaultsKey<Value> {
        let made = Unmanaged.passRetained(DefaultsKey(prefix + name, default: defaultValue))
        let address = UInt(bitPattern: made.toOpaque())
        let (exchanged, current) = fullKey.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing)
        guard !exchanged, let current = UnsafeRawPointer(bitPattern: current) else { return made.takeUnretainedValue() }
        made.release()
        return Unmanaged<DefaultsKey<Value>>.fromOpaque(current).takeUnretainedValue()
    }
}
