import Synchronization

/// One key's cached answer in one ``CachingProvider``, published so that a typed read can take
/// it without the cache's lock (see ``CacheReadPath``).
///
/// The cache publishes an answer only while it holds that answer as an entry, and withdraws it,
/// under its lock, wherever the entry goes (a write starts, an invalidation, an event): a read
/// that finds an answer published gives what the cache held at that moment.
final class CacheReadSlot: Sendable {
    /// The ``CacheReadPath/id`` of the cache the slot belongs to; never reused by another cache.
    let cacheID: UInt64
    /// The key as the cache stores it.
    let key: String
    /// The key path ``Defaults`` observes the key by, handed to it with the key's events (see
    /// ``CacheDirectObserver``).
    let observationKey: ObservationTracker.KeyPathType
    /// The key's record in the cache, for a typed write, which then finds it without hashing the
    /// key. Not counted, and read only under the cache's lock: a record with a slot stays in the
    /// cache's table as long as the cache (``CacheState/Record/isEmpty``), and the slot is used
    /// only through its live cache (``CacheReadPath/id``).
    private let record: Unmanaged<CacheState.Record>
    /// The address of the published ``PublishedAnswer``, which the slot holds retained, or 0 when
    /// nothing is published (the read then takes the cache's locked path).
    let published = Atomic<UInt>(0)
    /// Set when the cache goes away: the keys that remember this slot may give their link to
    /// another cache.
    private let abandoned = Atomic<Bool>(false)

    var isAbandoned: Bool { abandoned.load(ordering: .acquiring) }

    /// Marks the slot as one of a cache that went away.
    func abandon() {
        abandoned.store(true, ordering: .releasing)
    }

    init(cacheID: UInt64, key: String, observationKey: ObservationTracker.KeyPathType, record: CacheState.Record) {
        self.cacheID = cacheID
        self.key = key
        self.observationKey = observationKey
        self.record = Unmanaged.passUnretained(record)
    }

    /// Runs `body` with the key's record, counting no reference to it; only under the cache's lock.
    func withRecord<Result>(_ body: (CacheState.Record) -> Result) -> Result {
        record._withUnsafeGuaranteedRef(body)
    }

    /// Publishes `value`; only under the cache's lock, and only when nothing is published.
    func publish(_ value: DefaultsValue?) {
        let answer = Unmanaged.passRetained(PublishedAnswer(value))
        published.store(UInt(bitPattern: answer.toOpaque()), ordering: .sequentiallyConsistent)
    }

    /// Withdraws the published answer, if any, and returns its address, which the caller must
    /// release once no reader can still hold it (``CacheReadPath/retire(_:)``). Only under the
    /// cache's lock.
    func withdraw() -> UInt {
        // Only the cache, under its lock, changes `published`: nothing published stays so.
        guard published.load(ordering: .relaxed) != 0 else { return 0 }
        return published.exchange(0, ordering: .sequentiallyConsistent)
    }
}

/// An answer published in a ``CacheReadSlot``: the stored value, or `nil` for a cached absence.
final class PublishedAnswer: Sendable {
    let value: DefaultsValue?

    init(_ value: DefaultsValue?) {
        self.value = value
    }

    /// Releases the answer whose address `bits` a slot held.
    static func release(_ bits: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return }
        Unmanaged<PublishedAnswer>.fromOpaque(pointer).release()
    }
}
