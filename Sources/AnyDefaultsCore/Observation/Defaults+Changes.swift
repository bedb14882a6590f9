// Change streams and callbacks on `Defaults`, for every key, some keys or one typed key.
//
// They are built on the provider's events, so they report one change per key whose stored value
// actually changed (a write of the value already stored reports nothing), in commit order, from
// this instance, from any other `Defaults` on the same provider, and from elsewhere where the
// backend reports it. Handlers run after the store has released its locks and never re-entrantly:
// a handler that writes does not recurse, its own change is delivered after the current one.

extension DefaultsKeys: DefaultsKeyName {
    /// The key's name, so that typed keys can be listed with keys by name:
    /// `defaults.changes(forKeys: [DefaultsKeys.volume, "ui.theme"])`.
    public var defaultsKeyName: String { name }
}

extension Defaults {
    /// Calls `handler` for every change to a key in this store (within the scope; keys are given
    /// without the scope's prefix), until the observation is cancelled or released.
    ///
    /// ```swift
    /// let observation = defaults.observe { event in print(event.key, event.newValue as Any) }
    /// ```
    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        subscribe(fullKeys: nil, handler)
    }

    /// Calls `handler` for every change to one of `keys`.
    ///
    /// ```swift
    /// let observation = defaults.observe(keys: ["ui.theme", DefaultsKeys.volume]) { event in ... }
    /// ```
    public func observe(keys: [any DefaultsKeyName], _ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        subscribe(fullKeys: Set(keys.map { fullKey($0.defaultsKeyName) }), handler)
    }

    /// Calls `handler` with the new value of `key` after each change: what is stored, or else
    /// the registered default, or else the key's default.
    ///
    /// ```swift
    /// let observation = defaults.observe(.volume) { volume in player.volume = volume }
    /// ```
    public func observe<Value>(_ key: DefaultsKey<Value>, _ handler: @escaping @Sendable (Value) -> Void) -> DefaultsObservation {
        subscribe(fullKeys: [fullKey(key.name)]) { [self] event in handler(value(of: key, stored: event.newValue)) }
    }

    /// Every change to a key in this store, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await event in defaults.changes() { print("\(event.key) changed") }
    /// ```
    public func changes() -> AsyncStream<DefaultsChangeEvent> {
        stream { observe($0) }
    }

    /// Every change to one of `keys`, as an asynchronous sequence.
    public func changes(forKeys keys: [any DefaultsKeyName]) -> AsyncStream<DefaultsChangeEvent> {
        stream { observe(keys: keys, $0) }
    }

    /// The value of `key` now, and then its new value after each change.
    ///
    /// ```swift
    /// for await volume in defaults.values(of: .volume) {
    ///     player.volume = volume          // the current volume first
    /// }
    /// ```
    ///
    /// Changes made while the sequence starts may be reported as one, the latest.
    public func values<Value>(of key: DefaultsKey<Value>) -> AsyncStream<Value> {
        let fullKey = fullKey(key.name)
        return PrimedStream.make(Value.self) { offer in
            subscribe(fullKeys: [fullKey]) { [self] event in offer(value(of: key, stored: event.newValue), event.newValue) }
        } current: {
            let stored = storedValue(fullKey)
            return (value(of: key, stored: stored), stored)
        }
    }

    /// The new value of `key` after each change, preceded by its value now if `initial` is
    /// true (as ``values(of:)``).
    ///
    /// ```swift
    /// for await volume in defaults.values(of: .volume, initial: false) {
    ///     showVolumeBanner(volume)        // only when it changes, not at start
    /// }
    /// ```
    public func values<Value>(of key: DefaultsKey<Value>, initial: Bool) -> AsyncStream<Value> {
        initial ? values(of: key) : stream { observe(key, $0) }
    }

    // MARK: Internals

    /// Subscribes `handler` to the provider's events for the keys in this scope, or for the full
    /// keys in `fullKeys`; each event names its key without the scope's prefix.
    func subscribe(fullKeys: Set<String>?, _ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        let prefix = prefix
        return provider.observe { event in
            if let fullKeys {
                guard fullKeys.contains(event.key) else { return }
            } else if !event.key.hasPrefix(prefix) {
                return
            }
            var event = event
            if !prefix.isEmpty { event.key = String(event.key.dropFirst(prefix.count)) }
            handler(event)
        }
    }

    /// The value `key` reads as when the store holds `stored` for it: that value decoded, or
    /// else the registered default, or else the key's default. A value that cannot be decoded
    /// is reported and reads as the default.
    func value<Value>(of key: DefaultsKey<Value>, stored: DefaultsValue?) -> Value {
        let fullKey = fullKey(key.name)
        guard let value = stored ?? registeredValue(fullKey) else { return key.defaultValue }
        do {
            return try Value(defaultsValue: value)
        } catch {
            report(error.located(at: fullKey))
            return key.defaultValue
        }
    }

    /// What the provider stores under a full key (registered defaults aside); `nil` on an error,
    /// which is reported.
    func storedValue(_ fullKey: String) -> DefaultsValue? {
        do {
            return try provider.value(forKey: fullKey)
        } catch {
            report(error)
            return nil
        }
    }

    /// An `AsyncStream` fed by an observation, which it cancels when it ends.
    private func stream<Element: Sendable>(
        _ register: (@escaping @Sendable (Element) -> Void) -> DefaultsObservation
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let observation = register { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
