import Synchronization

/// The calls into the provider under test that have not returned yet, so that a group whose
/// provider hangs (a deadlock, a wait without end) fails instead of hanging the suite.
///
/// Every provider a group opens is wrapped in a ``ConformanceWatchedProvider``, which notes each
/// call here; the thread that runs the group looks at the oldest call still open while it waits.
/// The calls are spread over several locks, so that noting them hardly orders the threads of the
/// concurrency checks, whose calls must overlap for those checks to have teeth.
final class ConformanceCallWatch: Sendable {
    /// A call in flight: what was called, on which key, and since when.
    struct Call: Sendable {
        let name: String
        let key: String?
        let started: ContinuousClock.Instant
    }

    private final class Shard: Sendable {
        let open = Mutex<[Int: Call]>([:])
    }

    private let shards = (0..<16).map { _ in Shard() }
    private let next = Atomic(0)

    /// Notes that `name` was called (on `key`); pass what it returns to ``end(_:)`` once it returns.
    func begin(_ name: String, key: String? = nil) -> Int {
        let call = Call(name: name, key: key, started: .now)
        let id = next.wrappingAdd(1, ordering: .relaxed).oldValue
        shard(id).open.withLock { $0[id] = call }
        return id
    }

    /// Notes that the call `id` returned (or threw).
    func end(_ id: Int) {
        _ = shard(id).open.withLock { $0.removeValue(forKey: id) }
    }

    private func shard(_ id: Int) -> Shard {
        shards[Int(UInt(bitPattern: id) % UInt(shards.count))]
    }

    /// The call that has been open the longest, if it has been open longer than `limit`.
    func overdue(after limit: Duration) -> Call? {
        let now = ContinuousClock.now
        let oldest = shards.compactMap { shard in shard.open.withLock { $0.values.min { $0.started < $1.started } } }
            .min { $0.started < $1.started }
        return oldest.flatMap { now - $0.started > limit ? $0 : nil }
    }

    /// Runs `body` as the call `name`.
    func track<Result, Failure: Error>(_ name: String, key: String? = nil, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let id = begin(name, key: key)
        defer { end(id) }
        return try body()
    }
}
