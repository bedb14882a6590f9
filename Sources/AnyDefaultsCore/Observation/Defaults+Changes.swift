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

    /// Every change to a key in this store, as an asynchronous sequence, each event with its
    /// ``DefaultsChangeEvent/sequence`` number.
    ///
    /// ```swift
    /// for await event in defaults.changes() { print("\(event.key) changed") }
    /// ```
    ///
    /// A consumer that reads more slowly than the store changes holds at most what `buffering`
    /// allows (by default the newest 1024 events; older ones are dropped, which shows as a gap in
    /// the sequence numbers). A consumer that must see every change uses ``changes(after:limit:)``.
    public func changes(buffering: DefaultsBufferingPolicy = .default) -> AsyncStream<DefaultsChangeEvent> {
        stream(buffering) { observe($0) }
    }

    /// Every change to one of `keys`, as an asynchronous sequence; `buffering` as in
    /// ``changes(buffering:)``.
    public func changes(forKeys keys: [any DefaultsKeyName], buffering: DefaultsBufferingPolicy = .default) -> AsyncStream<DefaultsChangeEvent> {
        stream(buffering) { observe(keys: keys, $0) }
    }

    /// The changes after `position` (within the scope), for a consumer that resumes where it
    /// stopped, such as a client reconnecting with `Last-Event-ID`: first the changes the store's
    /// change history still holds after `position`, then every new change, without a gap or a
    /// repeat. When the history no longer holds them all (or `position` is `nil`, or from another
    /// numbering: another process, another `Defaults`), ``DefaultsResumedChanges/isResumed`` is
    /// false and the stream holds only new changes: the consumer reloads what it shows (read the
    /// store, or a ``snapshot()``) and goes on with the stream, which started before that read.
    ///
    /// ```swift
    /// let changes = defaults.changes(after: DefaultsChangePosition(lastEventID ?? ""))
    /// if !changes.isResumed { send(reset: defaults.snapshot()) }
    /// for await event in changes.events { send(event, id: defaults.position(of: event)) }
    /// ```
    ///
    /// The history is this `Defaults`'s, in memory: the newest events it delivered, at most
    /// ``retainChangeHistory(_:)``'s limit (1024 unless set), recorded from the first call of
    /// either on. A consumer that does not read holds at most `limit` undelivered events: beyond
    /// that the stream ends (never drops), and the consumer resumes after the last event it read.
    public func changes(after position: DefaultsChangePosition?, limit: Int = DefaultsBufferingPolicy.defaultLimit) -> DefaultsResumedChanges {
        let (stream, continuation) = AsyncStream.makeStream(of: DefaultsChangeEvent.self, bufferingPolicy: .bufferingOldest(max(limit, 1)))
        let scope = isScoped ? DefaultsKeyPrefix(prefix) : nil
        let deliver: @Sendable (DefaultsChangeEvent) -> Void = { event in
            var event = event
            if let scope {
                guard let key = scope.remainder(of: event.key) else { return }
                event.key = key
            }
            // A full buffer ends the stream rather than dropping an event: the consumer resumes.
            if case .dropped = continuation.yield(event) { continuation.finish() }
        }
        let feed = shared.feed
        let sequence = position.flatMap { $0.epoch == feed.epoch ? $0.sequence : nil }
        let (complete, observation) = feed.observe(
            after: sequence ?? .max, replay: { replayed in for event in replayed { deliver(event) } }, deliver)
        continuation.onTermination = { _ in observation.cancel() }
        return DefaultsResumedChanges(isResumed: sequence != nil && complete, events: stream, start: feed.position)
    }

    /// The position of `event` (delivered by this store) in its numbering, to resume after it.
    public func position(of event: DefaultsChangeEvent) -> DefaultsChangePosition {
        DefaultsChangePosition(epoch: shared.feed.epoch, sequence: event.sequence)
    }

    /// The position after the last change this store has delivered so far.
    public var changePosition: DefaultsChangePosition { shared.feed.position }

    /// Keeps the newest `limit` changes in memory from now on, so that consumers can resume with
    /// ``changes(after:limit:)`` (call it when the store opens, before any consumer comes);
    /// `0` stops keeping them. Without a call, the first resumption starts a history of 1024.
    /// Shared with the scoped views of this store.
    public func retainChangeHistory(_ limit: Int) {
        shared.feed.retainHistory(limit)
    }

    /// The value of `key` now, and then its new value after each change.
    ///
    /// ```swift
    /// for await volume in defaults.values(of: .volume) {
    ///     player.volume = volume          // the current volume first
    /// }
    /// ```
    ///
    /// Changes made while the sequence starts may be reported as one, the latest. A consumer that
    /// reads slowly holds at most what `buffering` allows (by default the newest 1024 values).
    public func values<Value>(of key: DefaultsKey<Value>, buffering: DefaultsBufferingPolicy = .default) -> AsyncStream<Value> {
        let fullKey = fullKey(key.name)
        return PrimedStream.make(Value.self, buffering: buffering) { offer in
            subscribe(fullKeys: [fullKey]) { [self] event in offer(value(of: key, stored: event.newValue), event.newValue) }
        } current: {
            let stored = storedValue(fullKey)
            return (value(of: key, stored: stored), stored)
        }
    }

    /// The new value of `key` after each change, preceded by its value now if `initial` is
    /// true (as ``values(of:buffering:)``).
    ///
    /// ```swift
    /// for await volume in defaults.values(of: .volume, initial: false) {
    ///     showVolumeBanner(volume)        // only when it changes, not at start
    /// }
    /// ```
    public func values<Value>(
        of key: DefaultsKey<Value>, initial: Bool, buffering: DefaultsBufferingPolicy = .default
    ) -> AsyncStream<Value> {
        initial ? values(of: key, buffering: buffering) : stream(buffering) { observe(key, $0) }
    }

    // MARK: Internals

    /// Subscribes `handler` to the provider's events for the keys in this scope, or for the full
    /// keys in `fullKeys`; each event names its key without the scope's prefix.
    func subscribe(fullKeys: Set<String>?, _ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        let scope = isScoped ? DefaultsKeyPrefix(prefix) : nil
        return shared.feed.observe { event in
            var event = event
            if let fullKeys {
                guard fullKeys.contains(event.key) else { return }
                if let scope { event.key = scope.remainder(of: event.key) ?? event.key }
            } else if let scope {
                // The keys under the prefix, as the scope's listing has them (DefaultsKeyPrefix).
                guard let key = scope.remainder(of: event.key) else { return }
                event.key = key
            }
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
        _ buffering: DefaultsBufferingPolicy, _ register: (@escaping @Sendable (Element) -> Void) -> DefaultsObservation
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: buffering.streamPolicy())
        let observation = register { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
