/// A property stored in a defaults store whose projected value is a Combine publisher:
/// `$volume.sink { … }` receives the current value, then every new one.
///
/// ```swift
/// final class PlayerSettings: ObservableObject {
///     @PublishedDefault(.volume) var volume                   // a typed key: name and default
///     @PublishedDefault("nickname") var nickname: String?     // nil until set
///     @PublishedDefault("theme", behavior: .willSet) var theme = Theme.light
/// }
///
/// let settings = PlayerSettings()
/// let cancellable = settings.$volume.sink { print("volume:", $0) }
/// settings.volume = 0.8                                       // stored, then published
/// ```
///
/// - **Where it lives**: in `store:`, or `Defaults.standard` as it is at the property's first
///   use (a mocked property never opens it). Changes made anywhere else — another property on
///   the key, another `Defaults`, another process where the backend reports it — reach the
///   property and its publisher.
/// - **When it publishes** (``PublishedDefaultBehavior``): by default after the value is
///   stored, so that the property reads the new value when subscribers get it
///   (`CurrentValueSubject`-like); with `behavior: .willSet`, before the property exposes it
///   (`@Published`-like). A value equal to the current one is not published again.
/// - **In an `ObservableObject`**: setting the property sends the object's `objectWillChange`
///   first, as `@Published` does; a change made elsewhere sends it on the main queue. The
///   object needs a stable `objectWillChange`: one `@Published` property, or its own
///   `let objectWillChange = ObservableObjectPublisher()`.
/// - **Mocks**: `_volume.mock = true` (or ``PublishedDefaultConfiguration/mock`` for every
///   property) before the first use keeps the value in memory, from its default, and never
///   touches the store.
///
/// The projected value (``Publisher``) also offers `reset()`, `isSet` and `migrate(to:)`.
@propertyWrapper
public struct PublishedDefault<Value: DefaultsSerializable>: Sendable {
    let storage: PublishedDefaultStorage<Value>

    /// A property for a typed key in `store`; the key gives the name and the default.
    ///
    /// ```swift
    /// @PublishedDefault(.volume, store: defaults) var volume
    /// ```
    public init(_ key: DefaultsKey<Value>, store: Defaults, behavior: PublishedDefaultBehavior = .didSet) {
        storage = PublishedDefaultStorage(key: key, behavior: behavior, store: { store })
    }

    /// A property stored under `name` in `store`, with the initial value as its default.
    public init(
        wrappedValue defaultValue: Value, _ name: some DefaultsKeyName, store: Defaults, behavior: PublishedDefaultBehavior = .didSet
    ) {
        self.init(DefaultsKey(name.defaultsKeyName, default: defaultValue), store: store, behavior: behavior)
    }

    /// An optional property stored under `name` in `store`, `nil` while nothing is stored.
    public init(_ name: some DefaultsKeyName, store: Defaults, behavior: PublishedDefaultBehavior = .didSet)
    where Value: ExpressibleByNilLiteral {
        self.init(wrappedValue: nil, name, store: store, behavior: behavior)
    }

    /// A property for a typed key in `Defaults.standard` (taken at the first use).
    ///
    /// ```swift
    /// @PublishedDefault(.volume) var volume
    /// ```
    public init(_ key: DefaultsKey<Value>, behavior: PublishedDefaultBehavior = .didSet) {
        storage = PublishedDefaultStorage(key: key, behavior: behavior, store: { Defaults.standard })
    }

    /// A property stored under `name` in `Defaults.standard`, with the initial value as its
    /// default.
    ///
    /// ```swift
    /// @PublishedDefault("volume") var volume = 0.5
    /// ```
    public init(wrappedValue defaultValue: Value, _ name: some DefaultsKeyName, behavior: PublishedDefaultBehavior = .didSet) {
        self.init(DefaultsKey(name.defaultsKeyName, default: defaultValue), behavior: behavior)
    }

    /// An optional property stored under `name` in `Defaults.standard`, `nil` while nothing is
    /// stored.
    public init(_ name: some DefaultsKeyName, behavior: PublishedDefaultBehavior = .didSet) where Value: ExpressibleByNilLiteral {
        self.init(wrappedValue: nil, name, behavior: behavior)
    }

    /// The stored value, or else the registered default, or else the default. Setting it stores
    /// the value and publishes it; for an optional value, `nil` removes the key.
    public var wrappedValue: Value {
        get { storage.value }
        nonmutating set { storage.set(newValue, objectWasTold: false) }
    }

    /// The publisher of the value, with `reset()`, `isSet` and `migrate(to:)`.
    public var projectedValue: Publisher {
        Publisher(storage)
    }

    /// Whether this property is kept in memory instead of its store; set it before the property
    /// is first used (read, written or subscribed to). It is also mocked when
    /// ``PublishedDefaultConfiguration/mock`` is set at its first use; reading this tells whether
    /// the property is (or will be) mocked.
    ///
    /// ```swift
    /// _volume.mock = true          // in the enclosing type, before using `volume`
    /// ```
    public var mock: Bool {
        get { storage.isMocked }
        nonmutating set { storage.mockRequested = newValue }
    }

    /// The typed key: the name in the store and the default.
    public var key: DefaultsKey<Value> { storage.key }

    /// Reads and writes the property of a class; for an `ObservableObject` (whose
    /// `objectWillChange` is an `ObservableObjectPublisher`), setting it sends `objectWillChange`
    /// first, as `@Published` does.
    public static subscript<Object: AnyObject>(
        _enclosingInstance object: Object, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let storage = object[keyPath: storageKeyPath].storage
            storage.connect(to: object)
            return storage.value
        }
        set {
            let storage = object[keyPath: storageKeyPath].storage
            let relay = storage.connect(to: object)
            relay?.sendNow()
            storage.set(newValue, objectWasTold: relay != nil)
        }
    }
}
