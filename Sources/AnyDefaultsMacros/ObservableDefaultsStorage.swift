import Observation

/// What an `@ObservableDefaults` class keeps for its properties: the store, the key prefix,
/// whether it ignores changes made elsewhere, and the registrar of what the store does not track.
/// The macro adds one, `_$defaults`; its expansions call the members below.
///
/// How a property is observed:
/// - A stored property reads through the store, whose reads take part in Observation one key at
///   a time and whose changes (from anywhere) tell the observers of that key. Nothing of the
///   model is touched when a change arrives, on whatever thread: it is safe for a model isolated
///   to the main actor, and costs the model no subscription.
/// - With `ignoresExternalChanges`, a stored property reads the store untracked and its setter
///   tells this registrar instead, so only changes made through the model reach its observers.
/// - A memory-only property uses this registrar as an `@Observable` class does its own.
public final class ObservableDefaultsStorage: Sendable {
    /// The store the properties live in.
    public let store: Defaults
    /// Put in front of every property's key.
    public let prefix: String
    /// Whether observers are told only of changes made through this model.
    public let ignoresExternalChanges: Bool
    @usableFromInline let registrar = ObservationRegistrar()

    /// Storage for a model on `store`, with keys under `prefix`.
    public init(store: Defaults, prefix: String, ignoresExternalChanges: Bool) {
        self.store = store
        self.prefix = prefix
        self.ignoresExternalChanges = ignoresExternalChanges
    }

    // MARK: Stored properties

    /// The value of a stored property: what the store holds for its key, or else its default.
    @inlinable
    public func value<Model: Observable, Value>(
        of property: ObservableDefaultsProperty<Value>, in model: Model,
        keyPath: @autoclosure () -> KeyPath<Model, Value>
    ) -> Value {
        guard ignoresExternalChanges else { return property.withKey(prefix: prefix) { store[$0] } }
        registrar.access(model, keyPath: keyPath())
        return property.withKey(prefix: prefix) { store.untrackedValue(of: $0) }
    }

    /// Stores a new value for a stored property (`nil` removes the key of an optional).
    @inlinable
    public func setValue<Model: Observable, Value>(
        _ value: Value, of property: ObservableDefaultsProperty<Value>, in model: Model,
        keyPath: @autoclosure () -> KeyPath<Model, Value>
    ) {
        let key = property.key(prefix: prefix)
        guard ignoresExternalChanges else {
            store[key] = value
            return
        }
        registrar.withMutation(of: model, keyPath: keyPath()) { store[key] = value }
    }

    // MARK: Memory-only properties

    /// Records a read of a memory-only property.
    @inlinable
    public func access<Model: Observable, Member>(_ model: Model, keyPath: KeyPath<Model, Member>) {
        registrar.access(model, keyPath: keyPath)
    }

    /// Makes a change to a memory-only property, telling its observers.
    @inlinable
    public func withMutation<Model: Observable, Member, Result>(
        of model: Model, keyPath: KeyPath<Model, Member>, _ mutation: () throws -> Result
    ) rethrows -> Result {
        try registrar.withMutation(of: model, keyPath: keyPath, mutation)
    }
}
