import AnyDefaultsPlatform
import Dispatch
import Synchronization

/// What every ``JournaledProvider`` on one journal in this process shares: the journal file, the
/// store's values in memory, and the observers. Writes are acknowledged once their record is in
/// the journal; the journal is applied to the upstream store in one batch a moment later, when it
/// is full, and when the last provider on it goes.
final class JournalStore: Sendable {
    static let backend = "Journal"
    /// The journals open in this process, by path: one `flock` holder per file.
    static let open = SharedInstances<String, JournalStore>()

    struct State {
        var values: KeyedValues
        let file: JournalFile
        /// The keys the journal's records change, and whether one of them removes every key:
        /// what a flush applies to the store (with the values in memory).
        var touched = Set<String>()
        var cleared = false
        /// A record's bytes, kept between writes so that a write allocates nothing.
        var scratch: [UInt8] = []
        var flushScheduled = false

        /// Notes that the journal now holds a change of `key`.
        mutating func touch(_ key: String) {
            touched.insert(key)
        }
    }

    let state: Mutex<State>
    let broadcaster = ChangeBroadcaster()
    let upstream: any DefaultsProvider
    let flushInterval: Duration
    /// The journal's canonical path.
    let path: String

    /// Opens the journal at `path` (already made canonical), replays what it holds into the
    /// upstream store, and loads the store's values.
    init(upstream: any DefaultsProvider, path: String, capacity: Int, flushInterval: Duration) throws(DefaultsError) {
        self.upstream = upstream
        self.flushInterval = flushInterval
        self.path = path
        // The last instance of this journal in this process may be closing (its final flush).
        _ = JournalFile.waitUntilReleased(path, timeout: .seconds(30))
        let file = try JournalFile(path: path, capacity: capacity, like: upstream.storeIdentity?.files.first, backend: Self.backend)
        // Read after the lock is taken: what the previous holder flushed last is in the store.
        try upstream.synchronize()
        var state = State(values: KeyedValues(try upstream.allValues()), file: file)
        for payload in file.records() {
            for operation in try Self.operations(in: payload, path: path) {
                switch operation {
                case .set(let key, let value):
                    state.values[key] = value
                    state.touch(key)
                case .remove(let key):
                    state.values[key] = nil
                    state.touch(key)
                case .clear:
                    state.values.removeAll()
                    state.cleared = true
                }
            }
        }
        // What a process left in the journal reaches the store now; if the store cannot take it
        // (a full disk), it stays in the journal and is tried again later.
        if (try? Self.flush(&state, into: upstream)) == nil {
            state.flushScheduled = true
        }
        self.state = Mutex(state)
        if self.state.withLock({ $0.flushScheduled }) { scheduleFlush() }
    }

    deinit {
        state.withLock { state in _ = try? Self.flush(&state, into: upstream) }
    }

    /// The operations of a record read back, their keys and values checked as a write's are.
    static func operations(in payload: UnsafeRawBufferPointer, path: String) throws(DefaultsError) -> [JournalRecord.Operation] {
        let operations: [JournalRecord.Operation]
        do {
            operations = try JournalRecord.operations(in: payload)
        } catch {
            throw DefaultsError(
                .corrupted, "A record of the store's journal has a valid checksum but cannot be read; move the journal aside.",
                backend: backend, path: path, cause: error)
        }
        for operation in operations {
            let valid: Bool
            let key: String?
            switch operation {
            case .set(let name, let value):
                key = name
                valid = (try? DefaultsValidation.canonicalKey(name, backend: backend)) == name
                    && (try? DefaultsValidation.checkValue(value, forKey: name, backend: backend)) != nil
            case .remove(let name):
                key = name
                valid = (try? DefaultsValidation.canonicalKey(name, backend: backend)) == name
            case .clear:
                key = nil
                valid = true
            }
            guard valid else {
                throw DefaultsError(
                    .corrupted, "A record of the store's journal holds a key or value no write could have made; move the journal aside.",
                    backend: backend, key: key, path: path)
            }
        }
        return operations
    }

    /// Applies the journal's records to `upstream` in one batch, makes them durable there, and
    /// empties the journal. On failure the journal is left as it was.
    static func flush(_ state: inout State, into upstream: any DefaultsProvider) throws(DefaultsError) {
        guard !state.file.isEmpty else { return }
        var keys = state.touched
        if state.cleared { keys.formUnion(try upstream.keys()) }
        let changes = keys.sorted().map { key in state.values[key].map { DefaultsChange.set(key, $0) } ?? .remove(key) }
        try upstream.apply(changes)
        // Durable before the journal empties: a power loss then loses at most the journal's
        // newest records, never older writes with newer ones kept.
        try upstream.makeDurable()
        state.file.reset()
        state.touched.removeAll(keepingCapacity: true)
        state.cleared = false
    }

    /// Appends the record `encode` writes; when the journal is full, applies it to the store and
    /// appends to the emptied journal. False when the record is larger than the journal can ever
    /// hold: the journal was applied to the store, and the caller writes there directly.
    func log(_ state: inout State, _ encode: (inout [UInt8]) -> Void) throws(DefaultsError) -> Bool {
        var scratch = state.scratch
        state.scratch = []
        defer { state.scratch = scratch }
        scratch.removeAll(keepingCapacity: true)
        encode(&scratch)
        guard state.file.canEverHold(payloadCount: scratch.count) else {
            try Self.flush(&state, into: upstream)
            return false
        }
        let file = state.file
        if !scratch.withUnsafeBytes({ file.append($0) }) {
            try Self.flush(&state, into: upstream)
            _ = scratch.withUnsafeBytes { file.append($0) }
        }
        if !state.flushScheduled {
            state.flushScheduled = true
            scheduleFlush()
        }
        return true
    }

    /// Writes `changes`, too large for the journal, to the store itself (the journal was applied
    /// first), durably: a power loss must not take this write and keep the journal's later ones.
    func writeDirectly(_ changes: [DefaultsChange]) throws(DefaultsError) {
        try upstream.apply(changes)
        try upstream.makeDurable()
    }

    func writeDirectly(_ change: DefaultsChange) throws(DefaultsError) {
        try writeDirectly([change])
    }

    /// Applies the journal to the store a moment from now (``JournalOptions/flushInterval``).
    private func scheduleFlush() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(flushInterval.clampedNanosecondsInt)) { [weak self] in
            self?.flushAfterInterval()
        }
    }

    private func flushAfterInterval() {
        let failed = state.withLock { state in
            do {
                try Self.flush(&state, into: upstream)
                state.flushScheduled = false
                return false
            } catch {
                return true
            }
        }
        if failed { scheduleFlush() }
    }

    /// Applies the journal to the store now.
    func flush() throws(DefaultsError) {
        try state.withLock { state throws(DefaultsError) in try Self.flush(&state, into: upstream) }
    }
}
