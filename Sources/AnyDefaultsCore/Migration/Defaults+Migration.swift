// Moving a value from one key (or store) to another, once.

extension Defaults {
    /// Moves the value stored for `source` to `target`, converted by `transform`, and removes
    /// `source`; does nothing if the store holds no value for `source` (a registered or default
    /// value does not count), so running it again is harmless.
    ///
    /// ```swift
    /// defaults.migrate(.legacyCount, to: .index) { Int($0) - 1 }
    /// defaults.migrate(.theme, to: .theme, in: sharedDefaults) { $0 }   // to another store
    /// ```
    ///
    /// Within one store both changes are one batch (atomic where the backend is), applied only if
    /// the source still holds the value read (``DefaultsProvider/apply(_:ifUnchanged:)``): a value
    /// another writer stores meanwhile is read again and moved in its turn, never lost. Two instances
    /// on one store (one file reached by two paths, say) count as one store, by their
    /// ``DefaultsProvider/storeIdentity``. Across stores the target is written first, then the
    /// source removed only if it still holds the value moved (``DefaultsProvider/removeValues(ifUnchanged:)``):
    /// a value written to it meanwhile is kept.
    ///
    /// - Parameters:
    ///   - targetStore: the store to move to; this one by default.
    ///   - transform: converts the old value; a `nil` for an optional target removes the target.
    /// - Returns: whether a value was moved. Errors go to the error handler, and leave the source
    ///   in place.
    @discardableResult
    public func migrate<Source, Target>(
        _ source: DefaultsKey<Source>, to target: DefaultsKey<Target>, in targetStore: Defaults? = nil,
        _ transform: (Source) -> Target
    ) -> Bool {
        do {
            return try throwing.migrate(source, to: target, in: targetStore, transform)
        } catch {
            report(error)
            return false
        }
    }

    /// Moves the value stored for `source` to `target` unchanged; see
    /// ``migrate(_:to:in:_:)``.
    @discardableResult
    public func migrate<Value>(_ source: DefaultsKey<Value>, to target: DefaultsKey<Value>, in targetStore: Defaults? = nil) -> Bool {
        migrate(source, to: target, in: targetStore) { $0 }
    }
}

extension ThrowingDefaults {
    /// Moves the value stored for `source` to `target`, converted by `transform`, and removes
    /// `source`, as ``Defaults/migrate(_:to:in:_:)``, throwing its errors.
    ///
    /// - Throws: the providers' errors; ``DefaultsError/Code-swift.struct/typeMismatch`` or
    ///   ``DefaultsError/Code-swift.struct/decodingFailed`` if the stored value cannot be read as
    ///   `Source`. The source is then left in place.
    @discardableResult
    public func migrate<Source, Target>(
        _ source: DefaultsKey<Source>, to target: DefaultsKey<Target>, in targetStore: Defaults? = nil,
        _ transform: (Source) -> Target
    ) throws(DefaultsError) -> Bool {
        let destination = targetStore ?? defaults
        let sourceKey = defaults.fullKey(source.name)
        let targetKey = destination.fullKey(target.name)
        let sameProvider = destination.provider as AnyObject === defaults.provider as AnyObject
            || Self.sameStore(destination.provider, defaults.provider)
        guard !(sameProvider && sourceKey == targetKey) else { return false }

        // Within one store the move is conditional on the source still holding what was read:
        // another writer's value, stored between the read and the batch, is moved in its turn
        // rather than removed unseen. Each retry follows a write that succeeded elsewhere.
        for _ in 0..<Self.migrationAttempts {
            guard let stored = try defaults.provider.value(forKey: sourceKey) else { return false }
            let change = try Self.migrated(stored, from: sourceKey, as: Source.self, to: targetKey, transform)
            if sameProvider {
                guard try defaults.provider.apply([change, .remove(sourceKey)], ifUnchanged: [sourceKey: stored]) else { continue }
            } else {
                try destination.provider.apply([change])
                try destination.provider.makeDurable()
                _ = try defaults.provider.removeValues(ifUnchanged: [sourceKey: stored])
            }
            destination.forgetDecoded(targetKey)
            defaults.forgetDecoded(sourceKey)
            return true
        }
        throw DefaultsError(
            .busy, "The value kept changing while it was moved to \"\(targetKey)\"; it was left in place.",
            backend: "Defaults", key: sourceKey)
    }

    /// How often a move within one store is tried while other writers keep changing its source.
    static var migrationAttempts: Int { 64 }

    /// The change that stores `stored`, read as `Source` and converted by `transform`, under
    /// `targetKey`.
    private static func migrated<Source: DefaultsSerializable, Target: DefaultsSerializable>(
        _ stored: DefaultsValue, from sourceKey: String, as _: Source.Type, to targetKey: String,
        _ transform: (Source) -> Target
    ) throws(DefaultsError) -> DefaultsChange {
        let value: Source
        do {
            value = try Source(defaultsValue: stored)
        } catch {
            throw error.located(at: sourceKey)
        }
        let converted = transform(value)
        if isAbsent(converted) { return .remove(targetKey) }
        do {
            return .set(targetKey, try converted.defaultsValue)
        } catch {
            throw error.located(at: targetKey)
        }
    }

    /// Whether two providers reach the same storage, by their identities.
    private static func sameStore(_ first: any DefaultsProvider, _ second: any DefaultsProvider) -> Bool {
        guard let one = first.storeIdentity, let other = second.storeIdentity else { return false }
        return one.overlaps(other)
    }
}
