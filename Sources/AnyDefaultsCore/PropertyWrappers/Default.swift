/// A property stored in a defaults store, under a key, with the value it has while nothing is
/// stored.
///
/// ```swift
/// struct PlayerSettings {
///     @Default("volume", store: defaults) var volume = 0.5
///     @Default("nickname", store: defaults) var nickname: String?     // nil until set
///     @Default(.theme, store: defaults) var theme                       // a typed key
/// }
///
/// var settings = PlayerSettings()
/// settings.volume = 0.8              // stored under "volume"
/// settings.$volume.reset()           // removed: reads 0.5 again
/// ```
///
/// Any ``DefaultsSerializable`` value works: numbers, strings, dates, URLs, arrays and dictionaries
/// of them, `RawRepresentable` enums that opt in, and `Codable` types that opt in with
/// ``DefaultsCodable`` (one line: `extension Layout: DefaultsCodable {}`). Assigning `nil` to an
/// optional property removes the key.
///
/// The property is a handle on the store: copies of it, other properties on the same key and
/// other ``Defaults`` instances on the same provider all see the same value, and setting it does
/// not mutate the enclosing value (so it works in structs, classes and `let` constants). Reads
/// take part in Observation: inside `withObservationTracking`, a read tracks this key alone.
///
/// The projected value (`$volume`) is the property itself, with ``reset()``, ``isSet``,
/// ``values``, ``observe(_:)`` and ``migrate(to:)``.
///
/// In the `AnyDefaults` module the `store:` argument may be left out to use `Defaults.standard`.
@propertyWrapper
public struct Default<Value: DefaultsSerializable>: Sendable {
    /// The key, with its name in the store and the default value.
    public let key: DefaultsKey<Value>
    /// The store the value lives in.
    public let store: Defaults

    /// A property stored under `name` in `store`, with the initial value as its default.
    public init(wrappedValue defaultValue: Value, _ name: some DefaultsKeyName, store: Defaults) {
        self.store = store
        key = store.makeKey(name.defaultsKeyName, default: defaultValue)
    }

    /// An optional property stored under `name` in `store`, `nil` while nothing is stored.
    public init(_ name: some DefaultsKeyName, store: Defaults) where Value: ExpressibleByNilLiteral {
        self.init(wrappedValue: nil, name, store: store)
    }

    /// A property for a typed key in `store`; the key gives the name and the default.
    ///
    /// ```swift
    /// @Default(.volume, store: defaults) var volume
    /// ```
    public init(_ key: DefaultsKey<Value>, store: Defaults) {
        self.key = key
        self.store = store
    }

    /// The stored value, or else the registered default, or else the default. Setting it stores
    /// the value; for an optional value, `nil` removes the key.
    @inlinable
    public var wrappedValue: Value {
        get { store[key] }
        nonmutating set { store[key] = newValue }
    }

    /// The property itself, for ``reset()``, ``isSet``, ``values`` and ``migrate(to:)``.
    public var projectedValue: Default<Value> { self }

    /// Removes the stored value, so the property reads as its default again.
    public func reset() {
        store.reset(key)
    }

    /// Whether the store holds a value for the key (the default does not count).
    public var isSet: Bool {
        store.hasValue(key)
    }

    /// The current value, and then the new value after each change (from anywhere).
    ///
    /// ```swift
    /// for await volume in settings.$volume.values { player.volume = volume }
    /// ```
    public var values: AsyncStream<Value> {
        store.values(of: key)
    }

    /// The new value after each change (from anywhere), preceded by the current value if
    /// `initial` is true.
    ///
    /// ```swift
    /// for await volume in settings.$volume.values(initial: false) { showBanner(volume) }
    /// ```
    public func values(initial: Bool) -> AsyncStream<Value> {
        store.values(of: key, initial: initial)
    }

    /// Calls `handler` with the new value after each change, until the observation is cancelled
    /// or released.
    public func observe(_ handler: @escaping @Sendable (Value) -> Void) -> DefaultsObservation {
        store.observe(key, handler)
    }

    /// Moves a stored value to `target` (another key, or the same key in another store), if
    /// this property holds one, then removes it here, so the migration runs once.
    ///
    /// ```swift
    /// final class Service {
    ///     @Default("user.name", store: legacy) private var legacyName = "guest"
    ///     @Default("profile.name", store: defaults) var name = "guest"
    ///
    ///     init() { $legacyName.migrate(to: $name) }
    /// }
    /// ```
    ///
    /// - Returns: whether a value was moved. Errors go to the store's error handler; on an
    ///   error nothing is removed here.
    @discardableResult
    public func migrate(to target: Default<Value>) -> Bool {
        store.migrate(key, to: target.key, in: target.store) { $0 }
    }

    /// Converts a stored value with `transform` and moves it to `target`, if this property holds
    /// one, then removes it here, so the migration runs once.
    ///
    /// ```swift
    /// $legacyCount.migrate(to: $index) { Int($0) - 1 }    // a Double count to an Int index
    /// ```
    @discardableResult
    public func migrate<Target>(to target: Default<Target>, _ transform: (Value) -> Target) -> Bool {
        store.migrate(key, to: target.key, in: target.store, transform)
    }
}
