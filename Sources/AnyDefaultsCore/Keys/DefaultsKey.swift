import Synchronization

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
// @unchecked: the stored properties are an immutable `String`, an immutable `Sendable` key path
// and an `Atomic` (the read slots the key remembers, see DefaultsKeys+ReadSlots.swift); the one subclass, `DefaultsKey`, adds
// only immutable `Sendable` values.
public class DefaultsKeys: @unchecked Sendable {
    /// The key's name in the store (before a ``Defaults/scoped(_:)`` prefix is added).
    public let name: String

    /// The newest ``ReadSlotLink`` of the caches this key was read from (retained), or 0.
    let readSlots = Atomic<UInt>(0)

    /// What a read of this key records for Observation, built once (see `ObservationTracker`).
    @usableFromInline let observedKeyPath: ObservationTracker.KeyPathType

    init(name: String, observedKeyPath: ObservationTracker.KeyPathType) {
        self.name = name
        self.observedKeyPath = observedKeyPath
    }

    deinit {
        forgetReadSlots()
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
// @unchecked: see `DefaultsKeys`; `defaultSource` (a `Sendable` value or a `@Sendable` closure)
// is an immutable `Sendable` value.
public final class DefaultsKey<Value: DefaultsSerializable>: DefaultsKeys, @unchecked Sendable {
    /// Where the default comes from: one value, or a closure called at each read that needs it.
    @usableFromInline enum DefaultSource: Sendable {
        case value(Value)
        case computed(@Sendable () -> Value)
    }

    @usableFromInline let defaultSource: DefaultSource

    /// The value read when the store holds nothing for this key (and no registered default);
    /// for a key made with a closure, what the closure returns now.
    @inlinable
    public var defaultValue: Value {
        switch defaultSource {
        case .value(let value): value
        case .computed(let make): make()
        }
    }

    /// Whether `Value` is an optional, whose `nil` a write stores as a removal: asked once here,
    /// as the runtime's conformance check costs more than the rest of a write's encoding.
    let valueIsOptional = Value.self is any AnyOptional.Type

    /// Creates a key named `name` whose value is `defaultValue` until one is stored.
    public init(_ name: String, default defaultValue: Value) {
        defaultSource = .value(defaultValue)
        super.init(name: name, observedKeyPath: ObservationTracker.makeKeyPath(name))
    }

    /// Creates a key named `name` whose default is computed by `makeDefault` at each read that
    /// finds nothing stored: a default that depends on the time, the locale or the machine.
    ///
    /// ```swift
    /// extension DefaultsKeys {
    ///     static let trialEnds = DefaultsKey<Date>("trialEnds") { Date().addingTimeInterval(30 * 86_400) }
    ///     static let workers = DefaultsKey<Int>("workers") { ProcessInfo.processInfo.activeProcessorCount }
    /// }
    /// ```
    ///
    /// The default is never stored: until a value is set, every read calls `makeDefault` again.
    public init(_ name: String, default makeDefault: @escaping @Sendable () -> Value) {
        defaultSource = .computed(makeDefault)
        super.init(name: name, observedKeyPath: ObservationTracker.makeKeyPath(name))
    }

    /// Creates a key with a key path already built for `name`.
    init(_ name: String, default defaultValue: Value, observedKeyPath: ObservationTracker.KeyPathType) {
        defaultSource = .value(defaultValue)
        super.init(name: name, observedKeyPath: observedKeyPath)
    }

    /// Creates a key named by `name`, for example a case of an enum of key names.
    public convenience init(_ name: some DefaultsKeyName, default defaultValue: Value) {
        self.init(name.defaultsKeyName, default: defaultValue)
    }

    /// Creates a key named by `name` whose default is computed by `makeDefault` at each read that
    /// finds nothing stored.
    public convenience init(_ name: some DefaultsKeyName, default makeDefault: @escaping @Sendable () -> Value) {
        self.init(name.defaultsKeyName, default: makeDefault)
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
