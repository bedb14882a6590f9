// Taking snapshots of a store, and a stream of them.

extension Defaults {
    /// An immutable copy of every value in the store (within the scope), with the registered
    /// defaults. An error of the store is reported and gives an empty snapshot; use
    /// ``ThrowingDefaults/snapshot()`` to get it.
    ///
    /// ```swift
    /// let before = defaults.snapshot()
    /// defaults[.volume] = 0.9
    /// before[.volume]           // still the old volume
    /// ```
    public func snapshot() -> DefaultsSnapshot {
        reportingSnapshot { () throws(DefaultsError) in try throwing.snapshot() }
    }

    /// An immutable copy of the values of `keys`, with their registered defaults.
    ///
    /// ```swift
    /// let audio = defaults.snapshot(keys: [DefaultsKeys.volume, DefaultsKeys.muted])
    /// ```
    public func snapshot(keys: [any DefaultsKeyName]) -> DefaultsSnapshot {
        reportingSnapshot { () throws(DefaultsError) in try throwing.snapshot(keys: keys) }
    }

    /// The snapshot of the whole store now, then a new one after each change.
    ///
    /// A change that leaves the snapshot as it was (a key outside the scope) yields nothing, and
    /// the changes of one batch usually yield one snapshot, taken once the batch is committed.
    public func snapshots() -> AsyncStream<DefaultsSnapshot> {
        PrimedStream.make { offer in
            observe { [self] _ in
                let snapshot = snapshot()
                offer(snapshot, snapshot)
            }
        } current: {
            let snapshot = snapshot()
            return (snapshot, snapshot)
        }
    }

    /// The snapshot of `keys` now, then a new one after each change to one of them.
    ///
    /// ```swift
    /// for await audio in defaults.snapshots(keys: [DefaultsKeys.volume, DefaultsKeys.muted]) {
    ///     mixer.apply(volume: audio[.volume], muted: audio[.muted])
    /// }
    /// ```
    public func snapshots(keys: [any DefaultsKeyName]) -> AsyncStream<DefaultsSnapshot> {
        values(forKeys: keys) { [self] in snapshot(keys: keys) }
    }

    /// What `read` returns now, then what it returns after each change to one of `keys`; a
    /// result equal to the one yielded last is skipped. For values derived from several keys.
    ///
    /// ```swift
    /// let labels = defaults.values(forKeys: [DefaultsKeys.volume, DefaultsKeys.muted]) {
    ///     defaults[.muted] ? "muted" : "volume \(defaults[.volume])"
    /// }
    /// ```
    ///
    /// `read` runs once per change (on the thread that delivers it), so it should read the store
    /// afresh; changes made while the sequence starts may be reported as one, the latest.
    public func values<Element: Sendable & Equatable>(
        forKeys keys: [any DefaultsKeyName], _ read: @escaping @Sendable () -> Element
    ) -> AsyncStream<Element> {
        PrimedStream.make { offer in
            observe(keys: keys) { _ in
                let element = read()
                offer(element, element)
            }
        } current: {
            let element = read()
            return (element, element)
        }
    }

    private func reportingSnapshot(_ take: () throws(DefaultsError) -> DefaultsSnapshot) -> DefaultsSnapshot {
        do {
            return try take()
        } catch {
            report(error)
            return DefaultsSnapshot(values: [:])
        }
    }

    /// The registered defaults in this scope, by key without the prefix, keeping those `include`
    /// accepts.
    func registeredDefaults(where include: (String) -> Bool = { _ in true }) -> [String: DefaultsValue] {
        let registered = shared.registered.withLock { $0 }
        var result: [String: DefaultsValue] = [:]
        for (fullKey, value) in registered where fullKey.hasPrefix(prefix) {
            let key = String(fullKey.dropFirst(prefix.count))
            if include(key) { result[key] = value }
        }
        return result
    }
}

extension ThrowingDefaults {
    /// An immutable copy of every value in the store (within the scope), as
    /// ``Defaults/snapshot()``, throwing the store's errors.
    public func snapshot() throws(DefaultsError) -> DefaultsSnapshot {
        defaults.shared.tracker.accessEveryKey()
        let prefix = defaults.prefix
        var values = try defaults.provider.allValues()
        if !prefix.isEmpty {
            values = Dictionary(values.compactMap { key, value in
                key.hasPrefix(prefix) ? (String(key.dropFirst(prefix.count)), value) : nil
            }, uniquingKeysWith: { first, _ in first })
        }
        return DefaultsSnapshot(values: values, registeredDefaults: defaults.registeredDefaults())
    }

    /// An immutable copy of the values of `keys` taken in one read of the whole store (one
    /// ``DefaultsProvider/allValues()`` call), so that the values belong together: a batch
    /// written meanwhile shows whole or not at all, on every built-in backend. It costs a read of
    /// every key, where ``snapshot(keys:)`` reads only those asked for, one by one. Reads of
    /// `keys` alone are tracked for Observation.
    ///
    /// ```swift
    /// let audio = try defaults.throwing.consistentSnapshot(keys: [DefaultsKeys.volume, DefaultsKeys.muted])
    /// ```
    public func consistentSnapshot(keys: [any DefaultsKeyName]) throws(DefaultsError) -> DefaultsSnapshot {
        let names = Set(keys.map(\.defaultsKeyName))
        for name in names { defaults.shared.tracker.access(key: defaults.fullKey(name)) }
        let stored = try defaults.provider.allValues()
        var values: [String: DefaultsValue] = [:]
        for name in names {
            if let value = stored[defaults.fullKey(name)] { values[name] = value }
        }
        return DefaultsSnapshot(values: values, registeredDefaults: defaults.registeredDefaults(where: names.contains))
    }

    /// An immutable copy of the values of `keys`, as ``Defaults/snapshot(keys:)``, throwing the
    /// store's errors.
    public func snapshot(keys: [any DefaultsKeyName]) throws(DefaultsError) -> DefaultsSnapshot {
        let names = Set(keys.map(\.defaultsKeyName))
        var values: [String: DefaultsValue] = [:]
        for name in names {
            let fullKey = defaults.fullKey(name)
            defaults.shared.tracker.access(key: fullKey)
            if let value = try defaults.provider.value(forKey: fullKey) { values[name] = value }
        }
        return DefaultsSnapshot(values: values, registeredDefaults: defaults.registeredDefaults(where: names.contains))
    }
}
