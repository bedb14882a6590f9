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
/// A key read or written through a typed key has a ``CacheReadSlot``, which publishes its entry
/// for reads without the lock (``CacheReadPath``), lets a typed write find the key's record, and
/// holds the key's key path for Observation: an entry is published only by a read that found it, and
/// withdrawn wherever the entry is removed. Entries are only ever added where none is, so a
/// published answer is always the entry's value.
struct CacheState {
    /// A point in the logical clock.
    typealias Time = UInt64

    /// Everything the cache knows of one key: its cached answer, what is in flight on it, and its
    /// read slot. Kept while any of these is there; a write or a read that missed holds its
    /// record (``Ticket``), so that it ends without looking the key up again.
    ///
    /// `@unchecked Sendable`: its mutable fields are read and written only by `CacheState`'s
    /// methods, which run under the cache's `Mutex`. A ``Ticket`` carries the reference from one
    /// locked section of the same write to the next and never touches the fields outside them.
    final class Record: @unchecked Sendable {
        let key: String
        /// The cached answer: `nil` when nothing is cached, `.some(nil)` for a cached absence.
        var entry: DefaultsValue??
        var writers = 0
        var fillers = 0
        /// The last time something could have changed this key.
        var stamp: Time = 0
        /// The value the latest write started stores (`nil`: a removal), while writes are in
        /// flight: the upstream's event for it is expected and does not stamp the key.
        var expected: DefaultsValue?
        /// The slot that publishes `entry` for typed reads, once the key was read or written
        /// through a typed key.
        var slot: CacheReadSlot? {
            didSet { unretainedSlot = slot.map { Unmanaged.passUnretained($0) } }
        }
        /// `slot`, without counting a reference: the record keeps it while the cache lives.
        private(set) var unretainedSlot: Unmanaged<CacheReadSlot>?

        init(key: String) {
            self.key = key
        }

        var isIdle: Bool { writers == 0 && fillers == 0 }
        /// Whether the record holds nothing worth keeping.
        var isEmpty: Bool { isIdle && entry == nil && slot == nil }
    }

    /// A read that missed or a write in flight: the key's record and the time it started.
    struct Ticket {
        // Not counted: the record stays in the table, which holds it, while the read or write
        // is in flight (its `fillers` or `writers` keep it there). Its end may drop it from the
        // table, so that is done through a counted reference (``record``).
        private let unmanagedRecord: Unmanaged<Record>
        let time: Time

        init(record: Record, time: Time) {
            unmanagedRecord = Unmanaged.passUnretained(record)
            self.time = time
        }

        var record: Record { unmanagedRecord.takeUnretainedValue() }

        /// Runs `body` with the record, counting no reference to it.
        func withRecord<Result>(_ body: (Record) -> Result) -> Result {
            unmanagedRecord._withUnsafeGuaranteedRef(body)
        }
    }

    /// The outcome of a lookup.
    enum Lookup {
        /// The cached answer; `nil` is a cached absence.
        case hit(DefaultsValue?)
        /// Not cached: read the upstream, then call ``finishFill(_:value:)``.
        case miss(Ticket)
    }

    /// A batch that is to reach the upstream, with the changes that remain once redundant ones
    /// are skipped.
    struct Batch {
        var changes: [DefaultsChange]
        /// The record of each change's key, in the same order.
        var records: [Record]
        var time: Time
    }

    /// Every key the cache knows something of. Swift's `String` equality is canonical
    /// equivalence, the same key identity as the provider contract, so a key in any normalization
    /// form finds its record. One table, so that a write hashes its key once.
    private var records: [String: Record] = [:]
    /// The number of records with an entry.
    private(set) var count = 0
    private var clock: Time = 0
    /// The last time something could have changed every key.
    private var globalStamp: Time = 0
    /// ``CachingProvider/removeAll()`` calls in flight.
    private var globalWriters = 0
    /// Writes in flight of any kind, each key of a batch counted.
    private var writesInFlight = 0

    var statistics = CacheStatistics()

    /// The lock-free read path whose slots this state publishes.
    let readPath: CacheReadPath
    /// Answers withdrawn from slots, released once no reader can still hold them.
    private var retired: [UInt] = []
    /// The record of the write begun last, while it is in flight: the upstream usually reports
    /// a write while the writer waits for it, and its event then finds the record without
    /// hashing the key. Not counted: it is cleared when that write ends, and until then the
    /// record has writers, so the table holds it.
    private var writing: Unmanaged<Record>?

    /// The observers that receive each event with its key's read slot (the ``Defaults`` over
    /// this cache), called by the cache itself rather than through its broadcaster: kept here,
    /// so that the event's one locked section hands them over too.
    private(set) var directObservers: [CacheDirectObserver] = []

    /// Whether a write of what the cache holds is skipped: only where the cache's answers are the
    /// store's as a write begins (the upstream counts every process's commits, or no other
    /// process writes its storage; see ``CachingProvider/init(_:)``). Otherwise another process
    /// may have replaced the value a moment ago, and skipping the write would lose it.
    let skipsKnownWrites: Bool

    /// Whether an external event forgets every answer rather than its key's: where the upstream
    /// has no commit count, it reports another process's changes one event at a time after
    /// reading them all, and an observer of the first, reading a key of a later one, must not get
    /// the value that key had before. (With a count, every changed key is forgotten before the
    /// first event.)
    let forgetsAllOnExternalChanges: Bool

    init(readPath: CacheReadPath, skipsKnownWrites: Bool, forgetsAllOnExternalChanges: Bool) {
        self.readPath = readPath
        self.skipsKnownWrites = skipsKnownWrites
        self.forgetsAllOnExternalChanges = forgetsAllOnExternalChanges
    }

    // MARK: Reads

    /// The cached answer for `key`, or a ticket to fetch it with.
    mutating func lookup(_ key: String) -> Lookup {
        let record = records[key]
        if let record, let cached = record.entry {
            statistics.hits &+= 1
            return .hit(cached)
        }
        statistics.misses &+= 1
        return .miss(startFill(record ?? insertRecord(key)))
    }

    /// ``lookup(_:)`` for a read through `slot`, which publishes the answer it finds.
    mutating func lookup(through slot: CacheReadSlot) -> Lookup {
        let result = lookup(slot.key)
        if case .hit(let cached) = result, slot.published.load(ordering: .relaxed) == 0 {
            slot.publish(cached)
        }
        return result
    }

    /// The read slot of `key`, made when the key is first read or written through a typed key,
    /// whose key path for Observation is `observationKey`.
    mutating func slot(forKey key: String, observationKey: ObservationTracker.KeyPathType) -> CacheReadSlot {
        let record = records[key] ?? insertRecord(key)
        if let slot = record.slot { return slot }
        let slot = CacheReadSlot(cacheID: readPath.id, key: key, observationKey: observationKey, record: record)
        record.slot = slot
        return slot
    }

    /// A ticket to read `key` from the upstream and cache it with ``finishFill(_:value:)``,
    /// whether or not it is cached now (a fresh read).
    mutating func ticketForFill(_ key: String) -> Ticket {
        startFill(records[key] ?? insertRecord(key))
    }

    /// Caches what a read that missed found in the upstream, unless something may have changed
    /// the key since the read took its ticket.
    mutating func finishFill(_ ticket: Ticket, value: DefaultsValue?) {
        let record = ticket.record
        record.fillers -= 1
        if record.writers == 0, record.stamp <= ticket.time, isQuiet(since: ticket.time), record.entry == nil {
            setEntry(record, value)
        }
        dropIfEmpty(record)
    }

    /// Ends a read that missed and failed.
    mutating func abandonFill(_ ticket: Ticket) {
        ticket.record.fillers -= 1
        dropIfEmpty(ticket.record)
    }

    /// A time for loading many keys at once (``CachingProvider/preload()``).
    var bulkTicket: Time { clock }

    /// Caches `values`, read from the upstream after `ticket` was taken, if nothing at all may
    /// have changed since. Returns whether it did.
    mutating func finishBulkFill(_ values: [String: DefaultsValue], ticket: Time) -> Bool {
        guard clock == ticket, writesInFlight == 0 else { return false }
        for (key, value) in values {
            let record = records[key] ?? insertRecord(key)
            if record.entry == nil { setEntry(record, value) }
        }
        return true
    }

    // MARK: Writes

    /// Starts writing `value` (`nil`: removing) under `key`, or returns `nil` when the cache
    /// already holds that answer, in which case the write is skipped.
    mutating func beginWrite(_ key: String, value: DefaultsValue?) -> Ticket? {
        beginWrite(records[key] ?? insertRecord(key), value: value)
    }

    /// ``beginWrite(_:value:)`` for the key of `slot`, whose record it holds.
    mutating func beginWrite(through slot: CacheReadSlot, value: DefaultsValue?) -> Ticket? {
        slot.withRecord { beginWrite($0, value: value) }
    }

    private mutating func beginWrite(_ record: Record, value: DefaultsValue?) -> Ticket? {
        // An entry means no write to the key is in flight, so it is what the store holds.
        if let cached = record.entry {
            if skipsKnownWrites, cached == value {
                statistics.skippedWrites &+= 1
                return nil
            }
            removeEntry(of: record)
        }
        statistics.writes &+= 1
        let time = tick()
        writesInFlight += 1
        Self.start(record, value: value, at: time)
        writing = Unmanaged.passUnretained(record)
        return Ticket(record: record, time: time)
    }

    /// Ends a write begun with ``beginWrite(_:value:)``.
    mutating func finishWrite(_ ticket: Ticket, value: DefaultsValue?, succeeded: Bool) {
        let now = tick()
        let empty = ticket.withRecord { record in
            endWriting(record, value: value, started: ticket.time, untouched: now, now: now, succeeded: succeeded)
        }
        // Dropped outside the unretained use: removing it from the table may free it.
        if empty { dropIfEmpty(ticket.record) }
    }

    /// Starts a batch: drops the changes that would leave a key as the cache knows it already
    /// is, and returns the rest, or `nil` when nothing remains to write.
    mutating func beginBatch(_ changes: [DefaultsChange]) -> Batch? {
        var remaining: [DefaultsChange] = []
        var remainingRecords: [Record] = []
        remaining.reserveCapacity(changes.count)
        remainingRecords.reserveCapacity(changes.count)
        // The batch's time, taken (the clock ticked) only if something is written. A record
        // stamped with it was started by an earlier change of this batch, and its expected value
        // is what the key holds at this point of the batch.
        let time = clock &+ 1
        for change in changes {
            let known = records[change.key]
            let current: DefaultsValue??
            if let known, known.stamp == time {
                current = .some(known.expected)
            } else {
                current = known?.entry
            }
            if skipsKnownWrites, let current, current == change.value { continue }
            let record: Record
            if let known {
                if known.entry != nil { removeEntry(of: known) }
                record = known
            } else {
                record = insertRecord(change.key)
            }
            writesInFlight += 1
            Self.start(record, value: change.value, at: time)
            remaining.append(change)
            remainingRecords.append(record)
        }
        statistics.skippedWrites &+= changes.count - remaining.count
        guard !remaining.isEmpty else { return nil }
        statistics.writes &+= remaining.count
        clock = time
        return Batch(changes: remaining, records: remainingRecords, time: time)
    }

    /// Ends a batch begun with ``beginBatch(_:)``.
    mutating func finishBatch(_ batch: Batch, succeeded: Bool) {
        // A key changed twice in the batch counts two writers; only its last change leaves it
        // without writers, and that change's value is what the batch left. Its earlier changes
        // leave the key stamped `untouched` if nothing else stamped it since the batch began.
        let untouched = tick()
        let now = tick()
        for (change, record) in zip(batch.changes, batch.records) {
            if endWriting(record, value: change.value, started: batch.time, untouched: untouched, now: now, succeeded: succeeded) {
                dropIfEmpty(record)
            }
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
        invalidate(key, record: records[key])
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
    ///
    /// Returns the key's read slot, if it has one, which holds the key's key path for
    /// Observation; unretained: a record keeps its slot as long as the cache lives.
    mutating func absorb(_ event: DefaultsChangeEvent) -> Unmanaged<CacheReadSlot>? {
        if event.origin == .external, forgetsAllOnExternalChanges {
            let slot = records[event.key]?.unretainedSlot
            invalidateAll()
            return slot
        }
        // `writing` has writers, so it is the table's record of its key. Used without counting a
        // reference: the table holds it.
        if let writing = self.writing, writing._withUnsafeGuaranteedRef({ $0.key == event.key }) {
            return writing._withUnsafeGuaranteedRef { absorb(event, into: $0) }
        }
        guard let record = records[event.key] else {
            invalidate(event.key, record: nil)
            return nil
        }
        return absorb(event, into: record)
    }

    private mutating func absorb(_ event: DefaultsChangeEvent, into record: Record) -> Unmanaged<CacheReadSlot>? {
        // A local event of the one write in flight: accepting it can at most let that write
        // cache its value, which is then what the upstream holds; any other change to the key
        // reports a different value or stamps it. (Asked first: a key being written has no
        // entry.)
        if event.origin == .local, record.writers == 1, globalWriters == 0, record.expected == event.newValue {
            return record.unretainedSlot
        }
        // Where the upstream counts commits (`SharedChangeCounter`), an external change was
        // forgotten and read again before its event arrives: what was read is kept.
        if let cached = record.entry, cached == event.newValue { return record.unretainedSlot }
        let slot = record.unretainedSlot
        invalidate(event.key, record: record)
        return slot
    }

    // MARK: Direct observers

    /// Adds an observer that the cache calls with each event and its key's read slot.
    mutating func addDirectObserver(_ observer: CacheDirectObserver) {
        directObservers.append(observer)
    }

    /// Removes an observer added with ``addDirectObserver(_:)``.
    mutating func removeDirectObserver(_ observer: CacheDirectObserver) {
        directObservers.removeAll { $0 === observer }
    }

    // MARK: Inspection

    /// What the cache holds for `key`, without reading the upstream or counting a hit: `nil` when
    /// it holds nothing, `.some(nil)` for a cached absence.
    func peek(_ key: String) -> DefaultsValue?? {
        guard let record = records[key] else { return nil }
        return record.entry
    }

    /// The number of keys with a record.
    var recordCount: Int { records.count }

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

    // MARK: Entries and published answers

    /// Caches `value` as the answer of a record that has none.
    private mutating func setEntry(_ record: Record, _ value: DefaultsValue?) {
        if record.entry == nil { count += 1 }
        record.entry = .some(value)
    }

    /// Removes an entry and withdraws its published answer: the one way an entry goes, so that
    /// no answer outlives its entry.
    private mutating func removeEntry(of record: Record) {
        record.entry = nil
        count -= 1
        if let slot = record.unretainedSlot { retire(slot._withUnsafeGuaranteedRef { $0.withdraw() }) }
    }

    /// Removes every entry and withdraws every published answer.
    private mutating func removeAllEntries() {
        guard count > 0 else { return }
        var withdrawn: [UInt] = []
        records = records.filter { _, record in
            if record.entry != nil {
                record.entry = nil
                if let slot = record.slot { withdrawn.append(slot.withdraw()) }
            }
            return !record.isEmpty
        }
        count = 0
        for bits in withdrawn { retire(bits) }
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
        for record in records.values {
            guard let slot = record.slot else { continue }
            PublishedAnswer.release(slot.withdraw())
            slot.abandon()
        }
        for bits in retired { PublishedAnswer.release(bits) }
        retired.removeAll()
    }

    // MARK: Helpers

    private mutating func tick() -> Time {
        clock &+= 1
        return clock
    }

    /// Whether nothing touched every key since `time` and no removal of every key is in flight.
    private func isQuiet(since time: Time) -> Bool {
        globalWriters == 0 && globalStamp <= time
    }

    private mutating func insertRecord(_ key: String) -> Record {
        let record = Record(key: key)
        records[key] = record
        return record
    }

    /// Removes `record` from the table if it holds nothing worth keeping.
    private mutating func dropIfEmpty(_ record: Record) {
        if record.isEmpty { records[record.key] = nil }
    }

    private mutating func startFill(_ record: Record) -> Ticket {
        record.fillers += 1
        return Ticket(record: record, time: clock)
    }

    /// Forgets the key of `record` (`nil`: a key the cache knows nothing of), stamping it.
    private mutating func invalidate(_ key: String, record: Record?) {
        let now = tick()
        guard let record else { return }
        if record.entry != nil { removeEntry(of: record) }
        record.stamp = now
        dropIfEmpty(record)
    }

    /// Counts a writer of `value` that starts at `time` in `record`.
    private static func start(_ record: Record, value: DefaultsValue?, at time: Time) {
        record.writers += 1
        record.stamp = time
        record.expected = value
    }

    /// Ends a write of `value` to `record`'s key that started at `started`. If writes or reads
    /// are still in flight on the key, it is stamped with the time of the write's end:
    /// `untouched` if nothing else stamped the key meanwhile, `now` otherwise (two fresh times,
    /// later than every ticket taken before; a batch that changes a key twice tells by them
    /// whether its last change may still cache the value).
    ///
    /// Returns whether the record now holds nothing, for the caller to drop it from the table
    /// (``dropIfEmpty(_:)``) through a reference it counts: the table's may be the last one.
    private mutating func endWriting(
        _ record: Record, value: DefaultsValue?, started: Time, untouched: Time, now: Time, succeeded: Bool
    ) -> Bool {
        writesInFlight -= 1
        record.writers -= 1
        if writing?.toOpaque() == Unmanaged.passUnretained(record).toOpaque() { writing = nil }
        let alone = record.stamp == started || record.stamp == untouched
        // Alone on the key from start to finish: the upstream holds exactly this value.
        if succeeded, record.writers == 0, alone, isQuiet(since: started) {
            setEntry(record, value)
        }
        if record.writers == 0 { record.expected = nil }
        if !record.isIdle { record.stamp = alone ? untouched : now }
        return record.isEmpty
    }
}
