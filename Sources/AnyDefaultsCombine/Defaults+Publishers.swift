// Publishers of values, chosen keys and snapshots, on any store.

extension Defaults {
    /// The value of `key` now, then its new value after each change: what is stored, or else the
    /// registered default, or else the key's default. See ``DefaultsPublisher`` for when values
    /// arrive, on which thread, and what happens to errors.
    ///
    /// ```swift
    /// let cancellable = defaults.publisher(for: .theme).sink { theme in apply(theme) }
    /// ```
    public func publisher<Value>(for key: DefaultsKey<Value>) -> DefaultsPublisher<Value> {
        DefaultsPublisher(PublicationSource(
            observe: { [self] changed in observe(keys: [key]) { _ in changed() } },
            read: { [self] in publishedValue(of: key) }))
    }

    /// The value under `key` read as `Value` now, then after each change; `nil` while nothing is
    /// stored or registered, or when the stored value cannot be read as `Value` (reported).
    ///
    /// ```swift
    /// let cancellable = defaults.publisher(forKey: "ui.font", as: String.self).sink { font in ... }
    /// ```
    public func publisher<Value: DefaultsSerializable>(
        forKey key: some DefaultsKeyName, as type: Value.Type = Value.self
    ) -> DefaultsPublisher<Value?> {
        let name = key.defaultsKeyName
        return DefaultsPublisher(PublicationSource(
            observe: { [self] changed in observe(keys: [name]) { _ in changed() } },
            read: { [self] in
                // As `publishedValue(of:)`: a value that fails to decode is left to the facade.
                let stored = value(forKey: name)
                let decoded = stored.flatMap { try? Value(defaultsValue: $0) } ?? (stored == nil ? nil : value(Value.self, forKey: name))
                return (decoded, PublicationMark.encoding(decoded) ?? .stored(stored))
            }))
    }

    /// A snapshot of `keys` now, then a new one after each change to one of them: one
    /// publisher for several settings that belong together.
    ///
    /// ```swift
    /// let cancellable = defaults.publisher(forKeys: [DefaultsKeys.volume, DefaultsKeys.muted])
    ///     .sink { audio in mixer.apply(volume: audio[.volume], muted: audio[.muted]) }
    /// ```
    public func publisher(forKeys keys: [any DefaultsKeyName]) -> DefaultsPublisher<DefaultsSnapshot> {
        DefaultsPublisher(PublicationSource(
            observe: { [self] changed in observe(keys: keys) { _ in changed() } },
            read: { [self] in
                let snapshot = snapshot(keys: keys)
                return (snapshot, .snapshot(snapshot))
            }))
    }

    /// A snapshot of the whole store (within its scope) now, then a new one after each change.
    /// The changes of one batch usually give one snapshot.
    ///
    /// ```swift
    /// let cancellable = defaults.snapshotPublisher().sink { state.settings = $0 }
    /// ```
    public func snapshotPublisher() -> DefaultsPublisher<DefaultsSnapshot> {
        DefaultsPublisher(PublicationSource(
            observe: { [self] changed in observe { _ in changed() } },
            read: { [self] in
                let snapshot = snapshot()
                return (snapshot, .snapshot(snapshot))
            }))
    }

    /// The value `key` reads as now, marked by its stored form. One read of the store: a value
    /// that fails to decode is read again through the facade, which reports the failure (and
    /// applies the decoding-failure policy) and gives the default.
    func publishedValue<Value>(of key: DefaultsKey<Value>) -> (Value, PublicationMark) {
        let stored = value(forKey: key)
        let decoded = stored.flatMap { try? Value(defaultsValue: $0) } ?? (stored == nil ? key.defaultValue : self[key])
        return (decoded, PublicationMark.encoding(decoded) ?? .stored(stored))
    }
}
