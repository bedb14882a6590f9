import AnyDefaultsCore
import Foundation
import Synchronization

/// A provider with one deliberate defect, to prove that the conformance suite catches it.
/// With `.none` it keeps the contract, so the harness itself is shown to be sound.
final class BrokenProvider: DefaultsProvider {
    enum Defect: String, CaseIterable, Sendable {
        case none
        case dropsDateType            // stores a date as a double
        case losesDoublePrecision     // stores doubles as Float
        case keysMissOne              // keys() leaves one key out
        case ignoresCanonicalEquivalence  // keys compared byte by byte
        case nonAtomicBatch           // applies a batch change by change
        case noChangeEvents           // never reports a change
        case eventsForNoOps           // reports writes that change nothing
        case forgetsOnReopen          // claims persistence, keeps nothing
        case losesConcurrentUpdates   // read-modify-write without holding the lock
        case acceptsEmptyKey          // stores "" as a key
        case removeAbsentThrows       // removing an absent key is an error
        case tearsConcurrentReads     // a reader may see half of a write
        case removeAllHangs           // removeAll() waits for a lock it never gets
        case concurrentWritesDeadlock // a write made while another is under way never returns
        case asyncWriteHangs          // setValueAsync never resumes its caller
        case releaseHangs             // its deinit waits for a thread that never ends
        case cancelHangs              // cancelling an observation waits for a lock it never gets
        case cancelDoesNothing        // an observation ends only when released, not when cancelled
    }

    /// How long a defect that hangs blocks its thread: far past any timeout of the tests, yet
    /// bounded, so that no thread is left behind for good.
    static let hang: TimeInterval = 120
    private let writers = Atomic(0)

    /// The storage shared by every instance opened on one identifier, as a file would be.
    final class Storage: Sendable {
        let values = Mutex<[String: DefaultsValue]>([:])
        let broadcaster = ChangeBroadcaster()
        /// Registrations that stay for the storage's life (`cancelDoesNothing`).
        let kept = Mutex<[DefaultsObservation]>([])
    }

    /// Whether an observation object still lives, without keeping it alive.
    final class WeakObservation: Sendable {
        private let reference: Mutex<Weak>
        private struct Weak { weak var observation: DefaultsObservation? }
        init(_ observation: DefaultsObservation) { reference = Mutex(Weak(observation: observation)) }
        var isAlive: Bool { reference.withLock { $0.observation != nil } }
    }

    private static let storages = Mutex<[String: Storage]>([:])
    static let backend = "Broken"

    let defect: Defect
    private let storage: Storage

    init(_ defect: Defect, identifier: String) {
        self.defect = defect
        storage = defect == .forgetsOnReopen
            ? Storage()
            : Self.storages.withLock { storages in
                if let existing = storages[identifier] { return existing }
                let created = Storage()
                storages[identifier] = created
                return created
            }
    }

    var capabilities: DefaultsCapabilities { [.persistent, .atomicBatch] }

    private func storedKey(_ key: String) throws(DefaultsError) -> String {
        if defect == .acceptsEmptyKey, key.isEmpty { return key }
        if defect == .ignoresCanonicalEquivalence {
            // Byte-wise keys, not canonicalized: equivalent spellings stay apart.
            if key.isEmpty { throw DefaultsError(.invalidKey, "A key must not be empty.", backend: Self.backend, key: key) }
            return key.utf8.map { String(format: "%02x", $0) }.joined()
        }
        return try DefaultsValidation.canonicalKey(key, backend: Self.backend)
    }

    private func visibleKey(_ stored: String) -> String {
        guard defect == .ignoresCanonicalEquivalence else { return stored }
        var bytes: [UInt8] = []
        var index = stored.startIndex
        while index < stored.endIndex, let next = stored.index(index, offsetBy: 2, limitedBy: stored.endIndex) {
            bytes.append(UInt8(stored[index..<next], radix: 16) ?? 0)
            index = next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func mangle(_ value: DefaultsValue) -> DefaultsValue {
        // Only the defects that change values walk them (recursively: a deep value on a small
        // stack must not crash the harness itself).
        guard defect == .dropsDateType || defect == .losesDoublePrecision else { return value }
        return switch (defect, value) {
        case (.dropsDateType, .date(let date)): .double(date.timeIntervalSinceReferenceDate)
        case (.losesDoublePrecision, .double(let double)): .double(Double(Float(double)))
        case (_, .array(let items)): .array(items.map(mangle))
        case (_, .dictionary(let items)): .dictionary(items.mapValues(mangle))
        default: value
        }
    }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try storedKey(key)
        return storage.values.withLock { $0[key] }
    }

    /// One snapshot, under the storage's lock, as a provider with `.atomicBatch` must answer (the
    /// protocol's default reads the keys one by one, and may see half of a batch).
    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        let values = storage.values.withLock { $0 }
        var result: [String: DefaultsValue] = [:]
        for (key, value) in values { result[visibleKey(key)] = value }
        if defect == .keysMissOne, let last = result.keys.sorted().last { result[last] = nil }
        return result
    }

    func keys() throws(DefaultsError) -> [String] {
        let keys = storage.values.withLock { $0.keys.map(visibleKey) }.sorted()
        return defect == .keysMissOne ? Array(keys.dropLast()) : keys
    }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let concurrent = writers.add(1, ordering: .sequentiallyConsistent).newValue > 1
        defer { writers.subtract(1, ordering: .sequentiallyConsistent) }
        if defect == .concurrentWritesDeadlock {
            // A writer that finds another under way waits for good; the first lingers, as one
            // holding a lock would, so that the writers of the concurrency checks meet.
            if concurrent { Thread.sleep(forTimeInterval: Self.hang) } else { usleep(1_000) }
        }
        if defect == .nonAtomicBatch {
            for change in changes { try applyOne(change) }
            return
        }
        var checked: [(String, DefaultsValue?)] = []
        for change in changes {
            let key = try storedKey(change.key)
            if let value = change.value { try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend) }
            checked.append((key, change.value.map(mangle)))
        }
        if defect == .removeAbsentThrows {
            let present = storage.values.withLock { $0 }
            for (key, value) in checked where value == nil && present[key] == nil {
                throw DefaultsError(.notFound, "No such key.", backend: Self.backend, key: key)
            }
        }
        if defect == .losesConcurrentUpdates {
            var copy = storage.values.withLock { $0 }
            for (key, value) in checked { copy[key] = value }
            usleep(200)  // widen the window in which another writer's update is overwritten
            storage.values.withLock { $0 = copy }
            return
        }
        if defect == .tearsConcurrentReads {
            // Publish half of each array first, outside any lock a reader would wait for.
            for (key, value) in checked {
                guard case .array(let items)? = value else { continue }
                storage.values.withLock { $0[key] = .array(Array(items.prefix(items.count / 2))) }
                usleep(100)
            }
        }
        storage.values.withLock { values in
            var events: [DefaultsChangeEvent] = []
            for (key, value) in checked {
                if values[key] == value, defect != .eventsForNoOps { continue }
                values[key] = value
                events.append(DefaultsChangeEvent(key: visibleKey(key), newValue: value))
            }
            if defect != .noChangeEvents { storage.broadcaster.enqueue(events) }
        }
        storage.broadcaster.deliverPending()
    }

    /// Compares and applies under the storage's lock, so that threads doing read-modify-writes
    /// this way lose nothing.
    func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        var conditions: [(String, DefaultsValue?)] = []
        for (key, value) in expected { conditions.append((try storedKey(key), value.map(mangle))) }
        var checked: [(String, DefaultsValue?)] = []
        for change in changes {
            let key = try storedKey(change.key)
            if let value = change.value { try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend) }
            checked.append((key, change.value.map(mangle)))
        }
        let applied = storage.values.withLock { values in
            guard conditions.allSatisfy({ values[$0.0] == $0.1 }) else { return false }
            var events: [DefaultsChangeEvent] = []
            for (key, value) in checked where values[key] != value {
                values[key] = value
                events.append(DefaultsChangeEvent(key: visibleKey(key), newValue: value))
            }
            storage.broadcaster.enqueue(events)
            return true
        }
        storage.broadcaster.deliverPending()
        return applied
    }

    /// Removes under the storage's lock, so that of several removers exactly one is told.
    func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let stored = try storedKey(key)
        let present = storage.values.withLock { values in
            guard values.removeValue(forKey: stored) != nil else { return false }
            storage.broadcaster.enqueue([DefaultsChangeEvent(key: visibleKey(stored), newValue: nil)])
            return true
        }
        storage.broadcaster.deliverPending()
        return present
    }

    private func applyOne(_ change: DefaultsChange) throws(DefaultsError) {
        let key = try storedKey(change.key)
        if let value = change.value { try DefaultsValidation.checkValue(value, forKey: key, backend: Self.backend) }
        storage.values.withLock { $0[key] = change.value.map(mangle) }
    }

    func removeAll() throws(DefaultsError) {
        if defect == .removeAllHangs { Thread.sleep(forTimeInterval: Self.hang) }
        try apply(keys().map { .remove($0) })
    }

    func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        if defect == .asyncWriteHangs { try? await Task.sleep(for: .seconds(Self.hang)) }
        try setValue(value, forKey: key)
    }

    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        if defect == .cancelDoesNothing {
            // Delivers for as long as the returned object lives; its cancel() does nothing.
            let returned = DefaultsObservation {}
            let alive = WeakObservation(returned)
            let registration = storage.broadcaster.observe { event in if alive.isAlive { handler(event) } }
            storage.kept.withLock { $0.append(registration) }
            return returned
        }
        let observation = storage.broadcaster.observe(handler)
        guard defect == .cancelHangs else { return observation }
        return DefaultsObservation {
            Thread.sleep(forTimeInterval: Self.hang)
            observation.cancel()
        }
    }

    deinit {
        if defect == .releaseHangs { Thread.sleep(forTimeInterval: Self.hang) }
    }
}
