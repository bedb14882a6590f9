import Synchronization

/// The state of one ``PublishedDefault`` property, shared by the copies of the wrapper and by the
/// subscriptions to its publisher.
///
/// At its first use it chooses its backing: the store (observed for the key, so that changes made
/// elsewhere reach it), or memory when mocked. It keeps two values: the one the property exposes
/// (read by `willSet` properties and in memory; a `didSet` property reads the store itself) and
/// the one it published, and it applies every new value in the behaviour's order: tell the
/// enclosing object, then publish and expose (`willSet`) or expose and publish (`didSet`).
///
/// Reads of the store take tickets, and each step keeps the value of the highest ticket it has
/// seen, so that a slow read never undoes a newer one; whatever happens, the last change of the
/// store is the last value applied, because its event triggers a read that starts after it.
final class PublishedDefaultStorage<Value: DefaultsSerializable>: Sendable {
    enum Backing: Sendable {
        case store(Defaults)
        case memory
    }

    private struct Slot {
        var value: Value
        var mark: PublicationMark?
        var ticket: UInt64 = 0
    }

    private struct State {
        var mockRequested = false
        var backing: Backing?
        var observation: DefaultsObservation?
        var exposed: Slot
        var published: Slot
        /// Numbers the published values, for subscriptions.
        var publication: UInt64 = 0
        /// The mark of the value the enclosing object was last told of.
        var notified: PublicationMark?
        var notifiedTicket: UInt64 = 0
        /// Whether a value was set in memory (not the default); memory backing only.
        var isSetInMemory = false
        var nextTicket: UInt64 = 0
        var relay: ObjectWillChangeRelay?
        /// The ticket of the latest change through the property.
        var latestChange: UInt64 = 0
        /// How many changes through the property (whose object was told) are under way.
        var ownChanges = 0
        /// Whether the store changed while the backing was being chosen.
        var changedWhileChoosing = false
        /// Whether the enclosing object is an `ObservableObject`; `nil` until known.
        var isObservable: Bool?

        mutating func takeTicket() -> UInt64 {
            nextTicket += 1
            return nextTicket
        }
    }

    let key: DefaultsKey<Value>
    let behavior: PublishedDefaultBehavior
    private let resolveStore: @Sendable () -> Defaults
    private let state: Mutex<State>
    /// Tells the subscriptions that the published value changed.
    private let broadcaster = ChangeBroadcaster()

    init(key: DefaultsKey<Value>, behavior: PublishedDefaultBehavior, store: @escaping @Sendable () -> Defaults) {
        self.key = key
        self.behavior = behavior
        resolveStore = store
        let initial = Slot(value: key.defaultValue)
        state = Mutex(State(exposed: initial, published: initial))
    }

    // MARK: Mocking

    /// Whether the property asks to be kept in memory (before its first use).
    var mockRequested: Bool {
        get { state.withLock { $0.mockRequested } }
        set { state.withLock { $0.mockRequested = newValue } }
    }

    /// Whether the property is kept in memory, or will be at its first use.
    var isMocked: Bool {
        let (backing, requested) = state.withLock { ($0.backing, $0.mockRequested) }
        guard let backing else { return requested || PublishedDefaultConfiguration.mock }
        if case .memory = backing { return true }
        return false
    }

    // MARK: Reading and writing

    var value: Value {
        if case .store(let store) = backing(), behavior == .didSet { return store[key] }
        return state.withLock { $0.exposed.value }
    }

    /// Stores `value` (in memory when mocked) and publishes it. `objectWasTold`: the enclosing
    /// object's `objectWillChange` was sent for this change already.
    func set(_ value: Value, objectWasTold: Bool) {
        let mark = PublicationMark.encoding(value)
        // A `nil` removes the value: the property reads (and publishes) its default again.
        guard mark != .stored(nil) else { return remove(objectWasTold: objectWasTold) }
        change(to: value, mark: mark, isSet: true, objectWasTold: objectWasTold) { store in store[key] = value }
    }

    /// Removes the value, so that the property reads its default; the enclosing object, if any,
    /// is told first, on this thread, as for a set.
    func reset() {
        let relay = state.withLock { $0.relay }
        relay?.sendNow()
        remove(objectWasTold: relay != nil)
    }

    private func remove(objectWasTold: Bool) {
        let value = key.defaultValue
        change(to: value, mark: PublicationMark.encoding(value), isSet: false, objectWasTold: objectWasTold) { store in store.reset(key) }
    }

    /// Makes a change through the property: in memory, or with `write` to the store (a `willSet`
    /// property publishes first). `mark`: the new value's, `nil` if it has no stored form.
    private func change(
        to value: Value, mark: PublicationMark?, isSet: Bool, objectWasTold: Bool, write: (Defaults) -> Void
    ) {
        let backing = backing()
        let ticket = state.withLock { state in
            // Until the change is applied, the store's event of it does not tell the object again.
            if objectWasTold { state.ownChanges += 1 }
            if case .memory = backing { state.isSetInMemory = isSet }
            state.latestChange = state.takeTicket()
            return state.latestChange
        }
        defer {
            if objectWasTold { state.withLock { $0.ownChanges -= 1 } }
        }
        let mark = mark ?? .sequence(ticket)
        switch backing {
        case .memory:
            apply(value, mark: mark, ticket: ticket, objectWasTold: objectWasTold)
        case .store(let store):
            if behavior == .willSet { apply(value, mark: mark, ticket: ticket, objectWasTold: objectWasTold) }
            // A newer change through the property (a subscriber that set it while this value was
            // published, or another thread) has the last word: this one is not stored after it.
            guard state.withLock({ $0.latestChange == ticket }) else { return }
            write(store)
            // Publishes what is now stored (`didSet`); converges if the write failed (reported by
            // the store) or another one followed.
            refresh(objectWasTold: objectWasTold)
        }
    }

    /// Whether a value is stored (or set in memory); the default does not count.
    var isSet: Bool {
        switch backing() {
        case .memory: state.withLock { $0.isSetInMemory }
        case .store(let store): store.hasValue(key)
        }
    }

    /// Reads the store again and applies what it holds (nothing when mocked).
    func refresh(objectWasTold: Bool = false) {
        let ticketed = state.withLock { state -> (Defaults, UInt64)? in
            guard let backing = state.backing else {
                state.changedWhileChoosing = true
                return nil
            }
            guard case .store(let store) = backing else { return nil }
            return (store, state.takeTicket())
        }
        guard let (store, ticket) = ticketed else { return }
        let (value, mark) = store.publishedValue(of: key)
        apply(value, mark: mark, ticket: ticket, objectWasTold: objectWasTold)
    }

    // MARK: Publishing

    /// What the property's publisher publishes: the published value, numbered.
    var source: PublicationSource<Value> {
        PublicationSource(
            observe: { [self] changed in
                _ = backing()
                return broadcaster.observe { _ in changed() }
            },
            read: { [self] in state.withLock { ($0.published.value, .sequence($0.publication)) } })
    }

    /// Connects the property to the `objectWillChange` of `object`, the instance it belongs to,
    /// so that changes made elsewhere send it; returns the relay, `nil` for an object that is
    /// not an `ObservableObject`. Looked up once per property.
    @discardableResult
    func connect(to object: AnyObject) -> ObjectWillChangeRelay? {
        let known = state.withLock { state -> ObjectWillChangeRelay?? in
            if let relay = state.relay, relay.isConnected { return .some(relay) }
            return state.isObservable == false ? .some(nil) : nil
        }
        if let known { return known }
        let relay = ObjectWillChangeRelay(for: object)
        state.withLock { state in
            state.relay = relay
            state.isObservable = relay != nil
        }
        return relay
    }

    // MARK: Internals

    /// The backing, chosen at the first use: memory if mocked, else the store, observed for the
    /// key, with its current value loaded.
    func backing() -> Backing {
        if let backing = state.withLock({ $0.backing }) { return backing }
        if state.withLock({ $0.mockRequested }) || PublishedDefaultConfiguration.mock {
            return state.withLock { state in
                if let backing = state.backing { return backing }
                state.backing = .memory
                return .memory
            }
        }
        let store = resolveStore()
        let observation = store.observe(keys: [key]) { [weak self] _ in self?.refresh() }
        let ticket = state.withLock { $0.takeTicket() }
        let (value, mark) = store.publishedValue(of: key)
        let other = state.withLock { state -> Backing? in
            if let backing = state.backing { return backing }
            state.backing = .store(store)
            state.observation = observation
            let loaded = Slot(value: value, mark: mark, ticket: ticket)
            state.exposed = loaded
            state.published = loaded
            state.publication += 1
            state.notified = mark
            state.notifiedTicket = ticket
            return nil
        }
        if let other {
            // Another thread chose first.
            observation.cancel()
            return other
        }
        // A change that arrived between observing and choosing found no backing to update.
        if state.withLock({ $0.changedWhileChoosing }) { refresh() }
        return .store(store)
    }

    /// Tells the enclosing object (unless it was told of this value, or is being told of a change
    /// through the property), then publishes and exposes `value` in the behaviour's order.
    private func apply(_ value: Value, mark: PublicationMark, ticket: UInt64, objectWasTold: Bool) {
        let relay = state.withLock { state -> ObjectWillChangeRelay? in
            guard ticket > state.notifiedTicket else { return nil }
            state.notifiedTicket = ticket
            guard mark != state.notified else { return nil }
            state.notified = mark
            return objectWasTold || state.ownChanges > 0 ? nil : state.relay
        }
        relay?.sendOnMainQueue()
        switch behavior {
        case .willSet:
            publish(value, mark: mark, ticket: ticket)
            expose(value, mark: mark, ticket: ticket)
        case .didSet:
            expose(value, mark: mark, ticket: ticket)
            publish(value, mark: mark, ticket: ticket)
        }
    }

    private func expose(_ value: Value, mark: PublicationMark, ticket: UInt64) {
        state.withLock { state in
            guard ticket > state.exposed.ticket else { return }
            state.exposed = Slot(value: value, mark: mark, ticket: ticket)
        }
    }

    private func publish(_ value: Value, mark: PublicationMark, ticket: UInt64) {
        let changed = state.withLock { state in
            guard ticket > state.published.ticket else { return false }
            let unchanged = state.published.mark == mark
            state.published = Slot(value: value, mark: mark, ticket: ticket)
            if !unchanged { state.publication += 1 }
            return !unchanged
        }
        if changed { broadcaster.publish(DefaultsChangeEvent(key: key.name, newValue: nil)) }
    }
}
