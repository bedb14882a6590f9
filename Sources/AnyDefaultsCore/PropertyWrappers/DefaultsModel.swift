import Observation

/// A base class for an observable settings model: each ``Setting`` property lives in a defaults
/// store under the model's prefix, and every property read tracks only itself in Observation.
///
/// ```swift
/// final class PlayerSettings: DefaultsModel {
///     @Setting("volume") var volume = 0.5          // stored as "player.volume", observable
///     @Setting("theme") var theme = Theme.light
///     @Setting(.lastOpened) var lastOpened         // a typed key
///     @ObservableOnly var isScrubbing = false      // observable, not stored
///     var scratch = 0                              // ignored: neither stored nor observed
/// }
///
/// let settings = PlayerSettings(store: defaults, prefix: "player.")
/// settings.volume = 0.8                            // stored, observers of volume told
/// ```
///
/// What ObservableDefaults does with macros, without them:
/// - **Stored and observable** (``Setting``): read from and written to the store, so a change
///   made anywhere — another model on the same store, another ``Defaults`` on the same provider,
///   another process where the backend reports it — reaches observers of that property alone.
/// - **Observable only** (``ObservableOnly``): kept in memory, observable like an `@Observable`
///   property.
/// - **Ignored**: a plain property is neither stored nor observed.
///
/// A subclass needs no initializer of its own: with default values on its properties it
/// inherits ``init(store:prefix:)`` (and, in the `AnyDefaults` module, `init(prefix:)` on the
/// standard store). A model is not `Sendable`; keep it in one isolation domain (for a user
/// interface, mark the subclass `@MainActor`). The store it reads is `Sendable` and may be shared
/// freely.
open class DefaultsModel: Observable {
    /// The store, scoped to the model's prefix: ``Setting`` names are relative to it.
    public let defaults: Defaults
    /// The same store unscoped: settings read it by full key, the fastest typed read.
    @usableFromInline let root: Defaults
    /// Observation of the ``ObservableOnly`` properties.
    @usableFromInline let registrar = ObservationRegistrar()

    /// A model whose settings live in `store` under `prefix`: `@Setting("volume")` with prefix
    /// `"player."` is stored as `"player.volume"`.
    public init(store: Defaults, prefix: String = "") {
        defaults = store.scoped(prefix)
        root = store.unscoped
    }

    /// The prefix put in front of every setting's name.
    public var prefix: String { defaults.prefix }

    /// Removes every stored key under the model's prefix, so every setting reads its default.
    public func resetAll() {
        defaults.removeAll()
    }
}

/// A property of a ``DefaultsModel`` stored in the model's store, under the model's prefix and
/// `name`, and observable one property at a time.
///
/// ```swift
/// final class Settings: DefaultsModel {
///     @Setting("name") var name = "guest"
///     @Setting("nickname") var nickname: String?
///     @Setting(.volume) var volume
/// }
/// ```
///
/// Only for properties of ``DefaultsModel`` subclasses; elsewhere use ``Default``.
@propertyWrapper
public struct Setting<Value: DefaultsSerializable>: Sendable {
    /// The key, relative to the model's prefix, with the default value.
    public let key: DefaultsKey<Value>
    /// The key with the model's prefix, made on first use.
    @usableFromInline var fullKey: DefaultsKey<Value>?

    /// A setting stored under `name` (after the model's prefix), with the initial value as its
    /// default.
    public init(wrappedValue defaultValue: Value, _ name: some DefaultsKeyName) {
        key = DefaultsKey(name.defaultsKeyName, default: defaultValue)
    }

    /// An optional setting stored under `name`, `nil` while nothing is stored.
    public init(_ name: some DefaultsKeyName) where Value: ExpressibleByNilLiteral {
        self.init(wrappedValue: nil, name)
    }

    /// A setting for a typed key (its name is put after the model's prefix).
    public init(_ key: DefaultsKey<Value>) {
        self.key = key
    }

    /// Unavailable: a `Setting` needs the model it belongs to (see ``DefaultsModel``).
    @available(*, unavailable, message: "@Setting is for properties of DefaultsModel subclasses; use @Default elsewhere")
    public var wrappedValue: Value {
        get { key.defaultValue }
        set {}
    }

    /// Reads and writes the setting through its model's store.
    @inlinable
    public static subscript<Model: DefaultsModel>(
        _enclosingInstance model: Model, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get { model.root[fullKey(in: model, storage: storageKeyPath)] }
        set { model.root[fullKey(in: model, storage: storageKeyPath)] = newValue }
    }

    @inlinable
    static func fullKey<Model: DefaultsModel>(
        in model: Model, storage: ReferenceWritableKeyPath<Model, Self>
    ) -> DefaultsKey<Value> {
        if let fullKey = model[keyPath: storage].fullKey { return fullKey }
        return makeFullKey(in: model, storage: storage)
    }

    @usableFromInline
    static func makeFullKey<Model: DefaultsModel>(
        in model: Model, storage: ReferenceWritableKeyPath<Model, Self>
    ) -> DefaultsKey<Value> {
        let key = model[keyPath: storage].key
        let fullKey = model.root.makeKey(model.defaults.fullKey(key.name), default: key.defaultValue)
        model[keyPath: storage].fullKey = fullKey
        return fullKey
    }
}

/// A property of a ``DefaultsModel`` kept in memory, not stored, but observable like a property
/// of an `@Observable` class.
///
/// ```swift
/// final class Settings: DefaultsModel {
///     @ObservableOnly var isEditing = false
/// }
/// ```
@propertyWrapper
public struct ObservableOnly<Value> {
    @usableFromInline var value: Value

    /// An observable property with `wrappedValue` as its initial value.
    public init(wrappedValue: Value) {
        value = wrappedValue
    }

    /// Unavailable: an `ObservableOnly` needs the model it belongs to (see ``DefaultsModel``).
    @available(*, unavailable, message: "@ObservableOnly is for properties of DefaultsModel subclasses")
    public var wrappedValue: Value {
        get { value }
        set { value = newValue }
    }

    /// Reads and writes the value, telling Observation.
    @inlinable
    public static subscript<Model: DefaultsModel>(
        _enclosingInstance model: Model, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get {
            model.registrar.access(model, keyPath: wrappedKeyPath)
            return model[keyPath: storageKeyPath].value
        }
        set {
            model.registrar.withMutation(of: model, keyPath: wrappedKeyPath) {
                model[keyPath: storageKeyPath].value = newValue
            }
        }
    }
}

extension ObservableOnly: Sendable where Value: Sendable {}
