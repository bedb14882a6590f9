/// The bookkeeping of a ``CachingProvider``, always used under its `Mutex`: the cached answers,
/// the statistics, and what keeps them coherent with the upstream provider.
///
/// The upstream is called without holding the lock, so reads that fill the cache and writes may
/// overlap. Coherence rests on a logical clock:
/// - Everything that can make a cached answer wrong (a write starting or finishing, an
///   invalidation, an event from the upstream) ticks the clock and stamps the keys it touches,
///   or the whole cache. A key's entry is removed when a write to it starts.
/// - A read that misses takes a ticket (the clock's time) before it reads the upstream. It may
///   cache what it read only if no stamp on that key, or on the whole cache, is later than its
///   ticket and no write is in flight: then nothing changed the key while it was reading.
/// - A write caches its value when it finishes only if no other write to the key overlapped it
///   and nothing stamped the key meanwhile; overlapping writes may land in the upstream in either
///   order, so they leave the key uncached and the next read fetches the winner.
///
/// So an entry is present only while no write to its key is in flight, and it holds what the
/// upstream holds, up to changes the upstream has not reported yet.
///
/// A key read through a typed key has a ``CacheReadSlot``, which publishes its entry for reads
/// without the lock (``CacheReadPath``): an entry is published only by a read that found it, and
/// withdrawn wherever the entry is removed. Entries are only ever added where none is, so a
/// published answer is always the entry's value.
struct CacheState {
    /// A point in the logical clock.
    typealias Ticket = UInt64

    /// What is going on for one key: kept only while a read or write of it is in flight.
    private struct Activity {
        var writers = 0
        var fillers = 0
        /// The last time something could have changed this key.
        var stamp: Ticket = 0
        /// The value the latest write started stores (`nil`: a removal): the upstream's event
        /// for it is expected and does not stamp the key.
        var expected: DefaultsValue?

        var isIdle: Bool { writers == 0 && fillers == 0 }
    }

    /// The outcome of a lookup.
    enum Lookup {
        /// The cached answer; `nil` is a cached absence.
        case hit(DefaultsValue?)
        /// Not cached: read the upstream, then call ``finishFill(_:ticket:value:)``.
        case miss(Ticket)
    }

    /// A batch that is to reach the upstream, with the changes that remain once redundant ones
    /// are skipped.
    struct Batch {
        var changes: [DefaultsChange]
        var ticket: Ticket
    }

    /// Cached answers by key; a `nil` value is a cached absence (the nil sentinel). Swift's
    /// `String` equality is canonical equivalence, the same key identity as the provider contract,
    /// so a key in any normalization form finds its entry.
    private var entries: [String: DefaultsValue?] = [:]
    private var activity: [String: Activity] = [:]
    private var clock: Ticket = 0
    /// The last time something could have changed every key.
    private var globalStamp: Ticket = 0
    /// ``CachingProvider/removeAll()`` calls in flight.
    private var globalWriters = 0
    /// Writes in flight of any kind, each key of a batch counted.
    private var writesInFlight = 0

    var statistics = CacheStatistics()

    /// The lock-free read path whose slots this state publishes.
    let readPath: CacheReadPath
    /// The slot of each key read through a typed key; kept while the cache lives.
    private var slots: [String: CacheReadSlot] = [:]
    /// Answers withdrawn from slots, released once no reader can still hold them.
    private var retired: [UInt] = []

    init(readPath: CacheReadPath) {
        self.readPath = readPath
    }

    // MARK: Reads

    /// The cached answer for `key`, or a ticket to fetch it with.
    mutating func lookup(_ key: String) -> Lookup {
        if let cached = entries[key] {
            statistics.hits &+= 1
            return .hit(cached)
        }
        statistics.misses &+= 1
        activity[key, default: Activity()].fillers += 1
        return .miss(clock)
    }

    /// ``lookup(_:)`` for a read through `slot`, which publishes the answer it finds.
    mutating func lookup(through slot: CacheReadSlot) -> Lookup {
        let result = lookup(slot.key)
        if case .hit(let cached) = result, slot.published.load(ordering: .relaxed) == 0 {
            slot.publish(cached)
        }
        return result
    }

    /// The read slot of `key`, made when the key is first read through a typed key.
    mutating func slot(forKey key: String) -> CacheReadSlot {
        if let slot = slots[key] { return slot }
        let slot = CacheReadSlot(cacheID: readPath.id, key: key)
        slots[key] = slot
        return slot
    }

    /// A ticket to read `key` from the upstream and cache it with ``finishFill(_:ticket:value:)``,
    /// whether or not it is cached now (a fresh read).
    mutating func ticketForFill(_ key: String) -> Ticket {
        activity[key, default: Activity()].fillers += 1
        return clock
    }

    /// Caches what a read that missed found in the upstream, unless something may have changed
    /// the key since the read took its ticket.
    mutating func finishFill(_ key: String, ticket: Ticket, value: DefaultsValue?) {
        guard var record = activity[key] else { return }
        record.fillers -= 1
        if record.writers == 0, record.stamp <= ticket, isQuiet(since: ticket), entries[key] == nil {
            entries[key] = .some(value)
        }
        store(record, for: key)
    }

    /// Ends a read that missed and failed.
    mutating func abandonFill(_ key: String) {
        guard var record = activity[key] else { return }
        record.fillers -= 1
        store(record, for: key)
    }

    /// A ticket for loading many keys at once (``CachingProvider/preload()``).
    var bulkTicket: Ticket { clock }

    /// Caches `values`, read from the upstream after `ticket` was taken, if nothing at all may
    /// have changed since. Returns whether it did.
    mutating func finishBulkFill(_ values: [String: DefaultsValue], ticket: Ticket) -> Bool {
        guard clock == ticket, writesInFlight == 0 else { return false }
        for (key, value) in values where entries[key] == nil {
            entries[key] = .some(value)
        }
        return true
    }

    // MARK: Writes
    //
    // Writes touch each key's entry and activity record once or twice: a key is hashed for an
    // index, and the index reused to read, change or remove (a batch of ten keys through a cache
    // over SQLite spent a third of its time hashing keys when each step looked its key up again).

    /// Starts writing `value` (`nil`: removing) under `key`, or returns `nil` when the cache
    /// already holds that answer, in which case the write is skipped.
    mutating func beginWrite(_ key: String, value: DefaultsValue?) -> Ticket? {
        // A present entry means no write to the key is in flight, so it is what the store holds.
        if let index = entries.index(forKey: key) {
            if entries.values[index] == value {
                statistics.skippedWrites &+= 1
                return nil
            }
            removeEntry(at: index)
        }
        statistics.writes &+= 1
        let ticket = tick()
        writesInFlight += 1
        Self.start(&activity[key, default: Activity()], value: value, at: ticket)
        return ticket
    }

    /// Ends a write begun with ``beginWrite(_:value:)``.
    mutating func finishWrite(_ key: String, value: DefaultsValue?, ticket: Ticket, succeeded: Bool) {
        let now = tick()
        endWriting(key, value: value, ticket: ticket, untouched: now, now: now, succeeded: succeeded)
    }

    /// Starts a batch: drops the changes that would leave a key as the cache knows it already
    /// is, and returns the rest, or `nil` when nothing remains to write.
    mutating func beginBatch(_ changes: [DefaultsChange]) -> Batch? {
        var remaining: [DefaultsChange] = []
        remaining.reserveCapacity(changes.count)
        // The batch's ticket, taken (the clock ticked) only if something is written. A record
        // stamped with it was started by an earlier change of this batch, and its expected value
        // is what the key holds at this point of the batch.
        let ticket = clock &+ 1
        for change in changes {
            let record = activity.index(forKey: change.key)
            var entry: Dictionary<String, DefaultsValue?>.Index?
            let current: DefaultsValue??
            if let record, activity.values[record].stamp == ticket {
                current = .some(activity.values[record].expected)
            } else {
                entry = entries.index(forKey: change.key)
                current = entry.map { entries.values[$0] }
            }
            if let current, current == change.value { continue }
            if let entry { removeEntry(at: entry) }
            writesInFlight += 1
            if let record {
                Self.start(&activity.values[record], value: change.value, at: ticket)
            } else {
                activity[change.key] = Activity(writers: 1, stamp: ticket, expected: change.value)
            }
            remaining.append(change)
        }
        statistics.skippedWrites &+= changes.count - remaining.count
        guard !remaining.isEmpty else { return nil }
        statistics.writes &+= remaining.count
        clock = ticket
        return Batch(changes: remaining, ticket: ticket)
    }

    /// Ends a batch begun with ``beginBatch(_:)``.
    mutating func finishBatch(_ batch: Batch, succeeded: Bool) {
        // A key changed twice in the batch counts two writers; only its last change leaves it
        // without writers, and that change's value is what the batch left. Its earlier changes
        // leave the key stamped `untouched` if nothing else stamped it since the batch began.
        let untouched = tick()
        let now = tick()
        for change in batch.changes {
            endWriting(
                change.key, value: change.value, ticket: batch.ticket, untouched: untouched, now: now,
                succeeded: succeeded)
        }
    }

    /// Starts removing every key.
    mutating func beginRemoveAll() {
        statistics.writes &+= 1
        removeAllEntries()
        globalWriters += 1
        writesInFlight += 1
        globalStamp = tick()
    }

    /// Ends a removal of every key.
    mutating func finishRemoveAll() {
        globalWriters -= 1
        writesInFlight -= 1
        globalStamp = tick()
    }

    // MARK: Invalidation and events

    /// Forgets `key`; a read in flight will not cache what it found.
    mutating func invalidate(_ key: String) {
        if let index = entries.index(forKey: key) { removeEntry(at: index) }
        let now = tick()
        activity[key]?.stamp = now
    }

    /// Forgets every key; no read in flight will cache what it found.
    mutating func invalidateAll() {
        removeAllEntries()
        globalStamp = tick()
    }

    /// Takes in an event from the upstream: forgets the key unless the event is known to agree
    /// with the cache.
    ///
    /// Any event agrees when the cache holds its value: the entry was read from the upstream
    /// after the change, or holds an equal value (a later change sends an event of its own). A
    /// local one (made through the upstream instance) also agrees when it reports the one write
    /// in flight on the key; anything else (an external change, a write made on the upstream
    /// directly, bypassing the cache) invalidates the key.
    mutating func absorb(_ event: DefaultsChangeEvent) {
        // A local event of the one write in flight: accepting it can at most let that write cache
        // its value, which is then what the upstream holds; any other change to the key reports
        // a different value or stamps it. (Asked first: a key being written has no entry.)
        if event.origin == .local, let record = activity[event.key], record.writers == 1, globalWriters == 0,
            record.expected == event.newValue
        {
            return
        }
        // Where the upstream counts commits (`SharedChangeCounter`), an external change was
        // forgotten and read again before its event arrives: what was read is kept.
        if let cached = entries[event.key], cached == event.newValue { return }
        invalidate(event.key)
    }

    // MARK: Inspection

    /// What the cache holds for `key`, without reading the upstream or counting a hit: `nil` when
    /// it holds nothing, `.some(nil)` for a cached absence.
    func peek(_ key: String) -> DefaultsValue?? {
        entries[key]
    }

    /// The number of keys with a cached answer, absence included.
    var count: Int { entries.count }

    // MARK: Statistics

    /// The statistics, with the hits of lock-free reads taken in.
    mutating func currentStatistics() -> CacheStatistics {
        statistics.hits &+= readPath.harvestHits()
        return statistics
    }

    /// Sets every counter back to zero, lock-free hits included.
    mutating func resetStatistics() {
        _ = readPath.harvestHits()
        statistics = CacheStatistics()
    }

    // MARK: Published answers

    /// Removes an entry and withdraws its published answer: the one way an entry goes, so that
    /// no answer outlives its entry.
    private mutating func removeEntry(at index: Dictionary<String, DefaultsValue?>.Index) {
        let key = entries.keys[index]
        entries.remove(at: index)
        guard !slots.isEmpty, let slot = slots[key] else { return }
        retire(slot.withdraw())
    }

    /// Removes every entry and withdraws every published answer.
    private mutating func removeAllEntries() {
        entries.removeAll()
        for slot in slots.values { retire(slot.withdraw()) }
    }

    /// Releases `bits` (an answer's address, or 0) once no reader can hold it: at once in
    /// batches when no reader is inside, or after waiting for the readers when many wait.
    private mutating func retire(_ bits: UInt) {
        guard bits != 0 else { return }
        retired.append(bits)
        guard retired.count >= 16 else { return }
        if retired.count >= 256 {
            readPath.waitForReaders()
        } else if !readPath.isQuiet() {
            return
        }
        statistics.hits &+= readPath.harvestHits()
        for bits in retired { PublishedAnswer.release(bits) }
        retired.removeAll(keepingCapacity: true)
    }

    /// Withdraws and releases every published answer; for a cache that goes away, which no
    /// reader can be reading any more.
    mutating func releaseAnswers() {
        for slot in slots.values {
            PublishedAnswer.release(slot.withdraw())
            slot.abandon()
        }
        for bits in retired { PublishedAnswer.release(bits) }
        retired.removeAll()
    }

    // MARK: Helpers

    private mutating func tick() -> Ticket {
        clock &+= 1
        return clock
    }

    /// Whether nothing touched every key since `ticket` and no removal of every key is in flight.
    private func isQuiet(since ticket: Ticket) -> Bool {
        globalWriters == 0 && globalStamp <= ticket
    }

    /// Counts a writer of `value` that starts at `ticket` in `record`.
    private static func start(_ record: inout Activity, value: DefaultsValue?, at ticket: Ticket) {
        record.writers += 1
        record.stamp = ticket
        record.expected = value
    }

    /// Ends a write of `value` to `key` that started at `ticket`. If the key's record stays
    /// (other reads or writes are in flight), it is stamped with the time of the write's end:
    /// `untouched` if nothing else stamped the key meanwhile, `now` otherwise (two fresh times,
    /// later than every ticket taken before; a batch that changes a key twice tells by them
    /// whether its last change may still cache the value).
    private mutating func endWriting(
        _ key: String, value: DefaultsValue?, ticket: Ticket, untouched: Ticket, now: Ticket, succeeded: Bool
    ) {
        writesInFlight -= 1
        guard let index = activity.index(forKey: key) else { return }
        var record = activity.values[index]
        record.writers -= 1
        let alone = record.stamp == ticket || record.stamp == untouched
        // Alone on the key from start to finish: the upstream holds exactly this value.
        if succeeded, record.writers == 0, alone, isQuiet(since: ticket) {
            entries[key] = .some(value)
        }
        if record.isIdle {
            activity.remove(at: index)
        } else {
            record.stamp = alone ? untouched : now
            activity.values[index] = record
        }
    }

    private mutating func store(_ record: Activity, for key: String) {
        activity[key] = record.isIdle ? nil : record
    }
}
