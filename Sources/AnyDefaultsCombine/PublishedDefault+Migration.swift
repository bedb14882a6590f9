// Moving a property's value to another property (another key, or another store), once.

extension PublishedDefault.Publisher {
    /// Moves the value stored for this property to `target`, converted by `transform`, and
    /// removes it here; then records in the target's store that the move was made, so that it is
    /// made once, even if an older version of the program writes the old key again later.
    ///
    /// ```swift
    /// final class Service: ObservableObject {
    ///     @PublishedDefault("count") private var legacyCount = 1.0    // the old key held a Double
    ///     @PublishedDefault("index") var index = 0
    ///
    ///     init() {
    ///         $legacyCount.migrate(to: $index) { Int($0) - 1 }       // at every launch: moves once
    ///     }
    /// }
    /// ```
    ///
    /// Nothing happens while this property holds no value (a registered or default value does
    /// not count), so it can run at every launch. The record is the key
    /// `AnyDefaults.migrated:<this key>><target key>` in the target's store. Within one store the
    /// move is one batch (atomic where the backend is); across stores the target is written
    /// first. Both properties publish their new values. Between two mocked properties the move
    /// happens in memory; a mocked property never gives a value to, nor takes one from, a store.
    ///
    /// - Returns: whether a value was moved. Errors go to the store's error handler and leave
    ///   the value here.
    @discardableResult
    public func migrate<Target>(to target: PublishedDefault<Target>.Publisher, _ transform: (Value) -> Target) -> Bool {
        storage.migrate(to: target.storage, transform)
    }

    /// Moves the value stored for this property to `target` unchanged, once; see
    /// ``migrate(to:_:)``.
    @discardableResult
    public func migrate(to target: PublishedDefault<Value>.Publisher) -> Bool {
        storage.migrate(to: target.storage) { $0 }
    }
}

extension PublishedDefaultStorage {
    /// The key that records a migration from this property's key to `target`.
    func migrationRecord<Target>(to target: DefaultsKey<Target>) -> String {
        "AnyDefaults.migrated:\(key.name)>\(target.name)"
    }

    func migrate<Target>(to target: PublishedDefaultStorage<Target>, _ transform: (Value) -> Target) -> Bool {
        switch (backing(), target.backing()) {
        case (.memory, .memory):
            guard isSet else { return false }
            target.set(transform(value), objectWasTold: false)
            reset()
            return true
        case (.store(let source), .store(let destination)):
            let record = migrationRecord(to: target.key)
            guard !destination.hasValue(forKey: record),
                  source.migrate(key, to: target.key, in: destination, transform)
            else { return false }
            destination.set(true, forKey: record)
            refresh()
            target.refresh()
            return true
        case (.memory, .store), (.store, .memory):
            return false
        }
    }
}
