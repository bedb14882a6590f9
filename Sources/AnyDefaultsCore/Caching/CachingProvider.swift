import Synchronization

/// A read-through, write-through cache in front of any provider, itself a provider.
///
/// - A read answered from the cache costs a lock and a dictionary lookup; a typed read through
///   ``Defaults`` takes the answer the cache published for its key, without the lock. A read that
///   misses asks the upstream once and remembers the answer, absence included.
/// - A write goes to the upstream first; the cache changes only if it succeeded. A write of the
///   value the cache already holds (or the removal of a key it knows is absent) is skipped: the
///   upstream is not called and no event is sent. A batch skips such changes and passes the rest
///   on as one batch. Skipping needs the cache to hold the store's value when the write begins,
///   so it happens only for an upstream with a ``SharedChangeCounter`` (SQLite, LMDB) or without
///   ``DefaultsCapabilities/multiProcess`` (memory): for other stores shared between processes (a
///   JSON file, a `UserDefaults` suite, PostgreSQL) every write reaches the upstream, which skips
///   what changes nothing itself.
/// - Reads, writes and invalidations may overlap from any number of threads: once the writes
///   are done, the cache never serves a value the upstream no longer holds.
/// - Observers receive the upstream's events, each once; an external change (another instance
///   or process, where the upstream reports it) first invalidates the keys it touched, or, where
///   the upstream has no ``SharedChangeCounter``, every answer (its batch's later events may not
///   have arrived yet).
///
/// Write through the cache, not to the upstream directly: the cache learns of direct writes only
/// through the upstream's events.
///
/// **Other processes.** Where the upstream offers a ``SharedChangeCounter`` (SQLite, LMDB), a read
/// that starts after another process's write returned never returns the value that write
/// replaced: each read first compares the store's commit count with the one this process has
/// accounted for (one atomic load), and when another process committed, forgets the keys it
/// changed before answering. Elsewhere the cache learns of other processes' changes through the
/// upstream's events, a moment later; ``freshValue(forKey:)`` reads past the cache for a read that
/// must see them.
///
/// ```swift
/// let store = try SQLiteProvider(path: path).cached()
/// try store.setValue(.string("dark"), forKey: "ui.theme")
/// let theme = try store.value(forKey: "ui.theme")      // from the cache
/// try store.setValue(.string("dark"), forKey: "ui.theme")  // skipped: already stored
/// print(store.statistics)
/// ```
public final class CachingProvider<Upstream: DefaultsProvider>: DefaultsProvider {
    /// The provider this cache reads from and writes to.
    public let upstream: Upstream

    private let core: Core
    /// The lock-free read path of typed reads (see ``CacheReadPath``).
    let readPath: CacheReadPath
    private let subscription: DefaultsObservation
    /// The upstream's count of every process's commits, if it offers one, and what a read checks
    /// of it (kept apart, so that the check costs no reference counting).
    private let counter: SharedChangeCounter?
    private let probe: SharedChangeCounter.Probe?
    /// This cache's registration with `counter`, which tells it synchronously what changed.
    private let coherence: DefaultsObservation?

    /// What the upstream's observer needs, held apart from the provider so that the observer
    /// does not keep the provider alive.
    private final class Core: Sendable {
        let state: Mutex<CacheState>
        let broadcaster = ChangeBroadcaster()

        init(readPath: CacheReadPath, skipsKnownWrites: Bool, forgetsAllOnExternalChanges: Bool) {
            state = Mutex(CacheState(
                readPath: readPath, skipsKnownWrites: skipsKnownWrites, forgetsAllOnExternalChanges: forgetsAllOnExternalChanges))
        }

        deinit {
            state.withLock { $0.releaseAnswers() }
        }

        /// Takes in an event of the upstream and passes it on: to the direct observers with its
        /// key's read slot, then through the broadcaster. The upstream delivers its events one at
        /// a time, so this keeps their order for both.
        func relay(_ event: DefaultsChangeEvent) {
            let (observers, slot) = state.withLock { state in
                let slot = state.absorb(event)
                return (state.directObservers, slot)
            }
            // The array holds the observers while this runs: calling one counts no reference.
            for index in observers.indices {
                Unmanaged.passUnretained(observers[index])._withUnsafeGuaranteedRef { $0(event, slot) }
            }
            broadcaster.publish(event)
        }
    }

    /// Creates a cache in front of `upstream`. Nothing is read until asked for; see
    /// ``preload()`` to load every key at once.
    public init(_ upstream: Upstream) {
        self.upstream = upstream
        // Registered before observing: observing may start the upstream's watch for other
        // processes' changes, which reports through the registration from then on.
        counter = upstream.sharedChangeCounter
        probe = counter?.probe
        readPath = CacheReadPath(counter: counter)
        // A write of what the cache holds is skipped only where the cache is known to hold the
        // store's value as the write begins: with a commit count to catch up with, or for a store
        // no other process writes. Elsewhere (a JSON file, a suite, PostgreSQL) another process's
        // write reaches the cache a moment after it returned, and a skipped write would leave
        // that process's value in place of this later one. Without a count, an external event
        // forgets every answer (see `CacheState`).
        let core = Core(
            readPath: readPath, skipsKnownWrites: counter != nil || !upstream.capabilities.contains(.multiProcess),
            forgetsAllOnExternalChanges: counter == nil)
        self.core = core
        // The upstream's observer and the counter's registration hold `core` strongly: both are
        // cancelled when this cache goes (`subscription`, `coherence`), which releases it (as does
        // the end of each direct observer's registration, `observeDirectly`). A weak
        // reference would give `core` a side table, and every retain and release of it on the
        // write path the slow path (about 10% of a write through `Defaults` on memory).
        coherence = counter?.register(
            upstream: upstream as AnyObject,
            invalidate: { [core] keys in core.state.withLock { state in for key in keys { state.invalidate(key) } } },
            invalidateAll: { [core] in core.state.withLock { $0.invalidateAll() } })
        subscription = upstream.observe { [core] event in core.relay(event) }
    }

    public var capabilities: DefaultsCapabilities { upstream.capabilities }

    public var sharedChangeCounter: SharedChangeCounter? { counter }

    /// Catches up with every change committed before the call by any process: the upstream
    /// synchronizes, and the cache forgets what changed (everything, where the upstream cannot
    /// tell it which keys).
    public func synchronize() throws(DefaultsError) {
        if let counter {
            counter.synchronize()
        } else {
            try upstream.synchronize()
            invalidateAll()
        }
    }

    /// The upstream's ``DefaultsProvider/makeDurable()``: the cache holds nothing unwritten.
    public func makeDurable() throws(DefaultsError) {
        try upstream.makeDurable()
    }

    /// Forgets what other processes changed since this process last looked, before the cache
    /// answers or skips anything (see "Other processes" above).
    @inline(__always)
    private func catchUpWithOtherProcesses() {
        if let probe, !probe.isCurrent { counter?.synchronize() }
    }

    // MARK: Reads

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        catchUpWithOtherProcesses()
        // No canonicalization here: String equality is canonical equivalence already, and the
        // upstream validates and canonicalizes the keys that reach it.
        switch core.state.withLock({ $0.lookup(key) }) {
        case .hit(let value):
            return value
        case .miss(let ticket):
            return try fill(key, ticket: ticket)
        }
    }

    /// The read slot of `key`, for a typed key to remember; `observationKey` is the key's key
    /// path for Observation (see ``observeDirectly(_:)``).
    func readSlot(forKey key: String, observationKey: ObservationTracker.KeyPathType) -> CacheReadSlot {
        core.state.withLock { $0.slot(forKey: key, observationKey: observationKey) }
    }

    /// ``value(forKey:)`` for a typed read whose slot had no answer published: a hit publishes
    /// it for the reads that follow.
    func value(through slot: CacheReadSlot) throws(DefaultsError) -> DefaultsValue? {
        catchUpWithOtherProcesses()
        switch core.state.withLock({ $0.lookup(through: slot) }) {
        case .hit(let value):
            return value
        case .miss(let ticket):
            return try fill(slot.key, ticket: ticket)
        }
    }

    /// The value stored under `key` as of this call in every process, read from the upstream
    /// (after it caught up with other processes' commits, ``DefaultsProvider/synchronize()``);
    /// the answer replaces what the cache held. For a read that must see another process's write
    /// at once where the upstream offers no ``SharedChangeCounter`` (the JSON file and
    /// UserDefaults backends); elsewhere ``value(forKey:)`` already does.
    ///
    /// ```swift
    /// let limit = try store.freshValue(forKey: "quota.limit")
    /// ```
    public func freshValue(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        if let counter {
            counter.synchronize()
        } else {
            try upstream.synchronize()
        }
        let ticket = core.state.withLock { state in
            state.invalidate(key)
            return state.ticketForFill(key)
        }
        return try fill(key, ticket: ticket)
    }

    private func fill(_ key: String, ticket: CacheState.Ticket) throws(DefaultsError) -> DefaultsValue? {
        let value: DefaultsValue?
        do {
            value = try upstream.value(forKey: key)
        } catch {
            core.state.withLock { $0.abandonFill(ticket) }
            throw error
        }
        core.state.withLock { $0.finishFill(ticket, value: value) }
        return value
    }

    public func keys() throws(DefaultsError) -> [String] {
        try upstream.keys()
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try upstream.allValues()
    }

    /// The upstream's prefix query (served by its index), not a scan of the cache, which may hold
    /// only part of the keys.
    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        try upstream.keys(withPrefix: prefix)
    }

    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        try upstream.allValues(withPrefix: prefix)
    }

    // MARK: Writes

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try write(value, forKey: key)
    }

    /// ``setValue(_:forKey:)`` for the key of `slot` (a typed key's), which finds its record
    /// without hashing the key.
    func setValue(_ value: DefaultsValue, through slot: CacheReadSlot) throws(DefaultsError) {
        catchUpWithOtherProcesses()
        guard let ticket = core.state.withLock({ $0.beginWrite(through: slot, value: value) }) else { return }
        try write(value, forKey: slot.key, ticket: ticket)
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try write(nil, forKey: key)
    }

    /// The upstream's atomic remove-and-report, with the bookkeeping of a removal. Always asked of
    /// the upstream, even for a key the cache holds as absent: another process may have written
    /// it since, and the answer must be the store's.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        guard let ticket = core.state.withLock({ $0.beginWrite(key, value: nil) }) else {
            let existed = try upstream.removeValueIfPresent(forKey: key)
            if existed { core.state.withLock { $0.invalidate(key) } }
            return existed
        }
        let existed: Bool
        do {
            existed = try upstream.removeValueIfPresent(forKey: key)
        } catch {
            core.state.withLock { $0.finishWrite(ticket, value: nil, succeeded: false) }
            throw error
        }
        core.state.withLock { $0.finishWrite(ticket, value: nil, succeeded: true) }
        return existed
    }

    private func write(_ value: DefaultsValue?, forKey key: String) throws(DefaultsError) {
        // A write the cache skips as already stored must not rest on what another process replaced.
        catchUpWithOtherProcesses()
        guard let ticket = core.state.withLock({ $0.beginWrite(key, value: value) }) else { return }
        try write(value, forKey: key, ticket: ticket)
    }

    /// Writes `value` to the upstream for a write begun with `ticket`, and ends it.
    private func write(_ value: DefaultsValue?, forKey key: String, ticket: CacheState.Ticket) throws(DefaultsError) {
        do {
            if let value {
                try upstream.setValue(value, forKey: key)
            } else {
                try upstream.removeValue(forKey: key)
            }
        } catch {
            core.state.withLock { $0.finishWrite(ticket, value: value, succeeded: false) }
            throw error
        }
        core.state.withLock { $0.finishWrite(ticket, value: value, succeeded: true) }
    }

    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        catchUpWithOtherProcesses()
        guard let batch = core.state.withLock({ $0.beginBatch(changes) }) else { return }
        do {
            try upstream.apply(batch.changes)
        } catch {
            core.state.withLock { $0.finishBatch(batch, succeeded: false) }
            throw error
        }
        core.state.withLock { $0.finishBatch(batch, succeeded: true) }
    }

    public func removeAll() throws(DefaultsError) {
        core.state.withLock { $0.beginRemoveAll() }
        defer { core.state.withLock { $0.finishRemoveAll() } }
        try upstream.removeAll()
    }

    /// The upstream's compare-and-apply (atomic where the upstream's is). The comparison is the
    /// upstream's, never the cache's, so the cache forgets everything, as for ``removeAll()``.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        core.state.withLock { $0.beginRemoveAll() }
        defer { core.state.withLock { $0.finishRemoveAll() } }
        return try upstream.apply(changes, ifUnchanged: expected)
    }

    /// The upstream's compare-and-remove (atomic where the upstream's is). The cache cannot know
    /// which keys it will remove, so it forgets everything, as for ``removeAll()``.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        guard !expected.isEmpty else { return [] }
        core.state.withLock { $0.beginRemoveAll() }
        defer { core.state.withLock { $0.finishRemoveAll() } }
        return try upstream.removeValues(ifUnchanged: expected)
    }

    public var storeIdentity: DefaultsStoreIdentity? { upstream.storeIdentity }

    // MARK: Writes from async code: the same bookkeeping around the upstream's async writes

    public func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        try await writeAsync(value, forKey: key)
    }

    public func removeValueAsync(forKey key: String) async throws(DefaultsError) {
        try await writeAsync(nil, forKey: key)
    }

    private func writeAsync(_ value: DefaultsValue?, forKey key: String) async throws(DefaultsError) {
        catchUpWithOtherProcesses()
        guard let ticket = core.state.withLock({ $0.beginWrite(key, value: value) }) else { return }
        do {
            if let value {
                try await upstream.setValueAsync(value, forKey: key)
            } else {
                try await upstream.removeValueAsync(forKey: key)
            }
        } catch {
            core.state.withLock { $0.finishWrite(ticket, value: value, succeeded: false) }
            throw error
        }
        core.state.withLock { $0.finishWrite(ticket, value: value, succeeded: true) }
    }

    public func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError) {
        catchUpWithOtherProcesses()
        guard let batch = core.state.withLock({ $0.beginBatch(changes) }) else { return }
        do {
            try await upstream.applyAsync(batch.changes)
        } catch {
            core.state.withLock { $0.finishBatch(batch, succeeded: false) }
            throw error
        }
        core.state.withLock { $0.finishBatch(batch, succeeded: true) }
    }

    public func removeAllAsync() async throws(DefaultsError) {
        core.state.withLock { $0.beginRemoveAll() }
        defer { core.state.withLock { $0.finishRemoveAll() } }
        try await upstream.removeAllAsync()
    }

    // MARK: Events

    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        core.broadcaster.observe(handler)
    }

    /// ``observe(_:)`` for ``Defaults``: the cache calls `observer` itself, with each event and
    /// the read slot of its key when it has one (made by ``readSlot(forKey:observationKey:)``).
    func observeDirectly(_ observer: CacheDirectObserver) -> DefaultsObservation {
        core.state.withLock { $0.addDirectObserver(observer) }
        return DefaultsObservation { [core] in
            observer.deactivate()
            core.state.withLock { $0.removeDirectObserver(observer) }
        }
    }

    // MARK: Cache control

    /// What the cache has done since it was created or ``resetStatistics()`` was called.
    public var statistics: CacheStatistics {
        core.state.withLock { $0.currentStatistics() }
    }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() {
        core.state.withLock { $0.resetStatistics() }
    }

    /// The number of keys with a cached answer, absences included.
    public var cachedKeyCount: Int {
        core.state.withLock { $0.count }
    }

    /// Forgets what the cache holds for `key`, so the next read asks the upstream. Use it when
    /// the store was changed behind the upstream's back in a way it does not report.
    public func invalidate(_ key: String) {
        core.state.withLock { $0.invalidate(key) }
    }

    /// Forgets everything the cache holds.
    public func invalidateAll() {
        core.state.withLock { $0.invalidateAll() }
    }

    /// Loads every key of the upstream into the cache with one ``DefaultsProvider/allValues()``
    /// call, so that later reads of them are hits.
    ///
    /// Best effort under concurrency: if writes or invalidations overlap the load, what it read
    /// may be out of date, so it tries again, and after a few attempts leaves the cache to fill
    /// key by key.
    public func preload() throws(DefaultsError) {
        for _ in 0..<3 {
            let ticket = core.state.withLock { $0.bulkTicket }
            let values = try upstream.allValues()
            if core.state.withLock({ $0.finishBulkFill(values, ticket: ticket) }) { return }
        }
    }

    /// The object that holds the cache's state, for tests that check it goes with the cache.
    package var stateObject: AnyObject { core }

    /// How many direct observers (the ``Defaults`` over this cache) are registered, for tests
    /// that check one goes with its `Defaults`.
    package var directObserverCount: Int {
        core.state.withLock { $0.directObservers.count }
    }

    /// The number of keys the cache keeps a record of: those with an answer, a read or write in
    /// flight, or a typed key's slot. For tests, which check that nothing else stays.
    package var trackedKeyCount: Int {
        core.state.withLock { $0.recordCount }
    }

    /// What the cache holds for `key`, without asking the upstream or counting a hit: `nil` when
    /// nothing is cached, `.some(nil)` for a cached absence. For tests and diagnostics.
    package func cachedEntry(forKey key: String) -> DefaultsValue?? {
        core.state.withLock { $0.peek(key) }
    }
}
