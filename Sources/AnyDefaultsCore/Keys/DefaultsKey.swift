/// The namespace for typed keys: declare your keys as static members of an extension, and use
/// them with a leading dot wherever a ``DefaultsKey`` is expected.
///
/// ```swift
/// extension DefaultsKeys {
///     static let volume = DefaultsKey<Double>("volume", default: 0.5)
///     static let lastOpened = DefaultsKey<URL?>("lastOpened")          // default nil
///     static let theme = DefaultsKey<Theme>(SettingsKey.theme, default: .light)
/// }
///
/// defaults[.volume] = 0.8
/// if let url = defaults[.lastOpened] { open(url) }
/// ```
///
/// It is the base class of every ``DefaultsKey``, which is what lets `.volume` be found from a
/// `DefaultsKey<Double>` context; it cannot be subclassed outside this module.
// @unchecked: the only stored property is an immutable `String`, and the one subclass,
// `DefaultsKey`, adds only an immutable `Sendable` value. Nothing is ever mutated.
public class DefaultsKeys: @unchecked Sendable {
    /// The key's name in the store (before a ``Defaults/scoped(_:)`` prefix is added).
    public let name: String

    init(name: String) {
        self.name = name
    }
}

/// A typed key: the name of a setting, the type of its value and the value it has when nothing
/// is stored.
///
/// ```swift
/// extension DefaultsKeys {
///     static let launchCount = DefaultsKey<Int>("launchCount", default: 0)
/// }
/// defaults[.launchCount] += 1
/// defaults.reset(.launchCount)              // removes the stored value: reads give 0 again
/// ```
///
/// `Value` is any ``DefaultsSerializable`` type; for an optional `Value`, assigning `nil` removes
/// the stored value.
// @unchecked: see `DefaultsKeys`; `defaultValue` and `observedKeyPath` are immutable `Sendable`
// values.
public final class DefaultsKey<Value: DefaultsSerializable>: DefaultsKeys, @unchecked Sendable {
    /// The value read when the store holds nothing for this key (and no registered default).
    public let defaultValue: Value

    /// What a read of this key records for Observation, built once (see `ObservationTracker`).
    @usableFromInline let observedKeyPath: ObservationTracker.KeyPathType

    /// Creates a key named `name` whose value is `defaultValue` until one is stored.
    public init(_ name: String, default defaultValue: Value) {
        self.defaultValue = defaultValue
        observedKeyPath = ObservationTracker.makeKeyPath(name)
        super.init(name: name)
    }

    /// Creates a key with a key path already built for `name`.
    init(_ name: String, default defaultValue: Value, observedKeyPath: ObservationTracker.KeyPathType) {
        self.defaultValue = defaultValue
        self.observedKeyPath = observedKeyPath
        super.init(name: name)
    }

    /// Creates a key named by `name`, for example a case of an enum of key names.
    public convenience init(_ name: some DefaultsKeyName, default defaultValue: Value) {
        self.init(name.defaultsKeyName, default: defaultValue)
    }
}

extension DefaultsKey where Value: ExpressibleByNilLiteral {
    /// Creates a key for an optional value, `nil` until one is stored.
    ///
    /// ```swift
    /// static let lastOpened = DefaultsKey<URL?>("lastOpened")
    /// ```
    public convenience init(_ name: some DefaultsKeyName) {
        self.init(name.defaultsKeyName, default: nil)
    }
}

extension DefaultsKeys: CustomStringConvertible {
    public var description: String { name.debugDescription }
}
