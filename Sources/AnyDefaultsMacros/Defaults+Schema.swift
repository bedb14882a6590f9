// Typed snapshots: reading, writing and following a `DefaultsSchema`.

extension Defaults {
    /// The snapshot of `schema`'s keys now, taken in one consistent read of the store (see
    /// ``ThrowingDefaults/consistentSnapshot(keys:)``). An error of the store is reported and gives
    /// the snapshot of an empty store (every default); a value that cannot be read is reported and
    /// reads as its default.
    ///
    /// ```swift
    /// let audio = defaults.snapshot(Audio.self)
    /// print(audio.volume, audio.muted)
    /// ```
    public func snapshot<Schema: DefaultsSchema>(_ schema: Schema.Type) -> Schema {
        let snapshot: DefaultsSnapshot
        do {
            snapshot = try throwing.consistentSnapshot(keys: Schema.defaultsSchemaKeys)
        } catch {
            report(error)
            snapshot = DefaultsSnapshot(values: [:])
        }
        return Schema(defaultsSchemaValues: DefaultsSchemaValues(snapshot: snapshot, store: self))
    }

    /// Changes several properties of `schema` as one batch: `body` changes a snapshot taken now,
    /// then the properties it changed are written in one ``write(_:)`` transaction — all of them
    /// or, if anything fails, none.
    ///
    /// ```swift
    /// try defaults.write(Audio.self) { audio in
    ///     audio.volume = 0.8
    ///     audio.muted = false
    /// }
    /// ```
    ///
    /// Only the properties `body` changed are written, so changes made meanwhile to the others are
    /// kept. Observers see one event per changed key.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (nothing is written then), or the store's ``DefaultsError``.
    @discardableResult
    public func write<Schema: DefaultsSchema, Result>(_ schema: Schema.Type, _ body: (inout Schema) throws -> Result) throws -> Result {
        let old = snapshot(Schema.self)
        var new = old
        let result = try body(&new)
        try write { transaction in new.writeDefaultsSchemaChanges(from: old, to: &transaction) }
        return result
    }

    /// The snapshot of `schema` now, then a new one after each change to one of its keys;
    /// changes to other keys yield nothing, and neither does a change that leaves the snapshot
    /// equal to the last one yielded.
    ///
    /// ```swift
    /// for await audio in defaults.snapshots(Audio.self) {
    ///     mixer.apply(volume: audio.volume, muted: audio.muted)   // the current one first
    /// }
    /// ```
    ///
    /// The changes of one batch usually yield one snapshot, taken once the batch is committed.
    public func snapshots<Schema: DefaultsSchema>(_ schema: Schema.Type) -> AsyncStream<Schema> {
        values(forKeys: Schema.defaultsSchemaKeys) { [self] in snapshot(Schema.self) }
    }
}

extension ThrowingDefaults {
    /// The snapshot of `schema`'s keys, as ``Defaults/snapshot(_:)``, throwing the store's errors;
    /// a value that cannot be read is still reported and read as its default.
    public func snapshot<Schema: DefaultsSchema>(_ schema: Schema.Type) throws(DefaultsError) -> Schema {
        let snapshot = try consistentSnapshot(keys: Schema.defaultsSchemaKeys)
        return Schema(defaultsSchemaValues: DefaultsSchemaValues(snapshot: snapshot, store: defaults))
    }
}
