import AnyDefaultsCore
import Foundation
import Synchronization

/// A file-backed provider that keeps the whole contract — persistent, atomic across crashes,
/// safe for many processes, reporting external changes — unless it is given one ``Defect``, which
/// breaks exactly one point of the contract the way real backends break it.
///
/// The store is one file (``StoreFile``) replaced whole on every commit under a `flock` shared
/// by all processes; each instance keeps the last generation it read and reloads when the file's
/// generation changed, reporting the difference as external events (a watcher thread polls while
/// anyone observes).
public final class BrokenFileProvider: DefaultsProvider {
    /// The environment variable the child process reads its defect from.
    public static let defectVariable = "BROKEN_PROVIDER_DEFECT"

    public let defect: Defect
    private let core: Core
    /// Observations the provider keeps (for the defects that mishandle them).
    private let held = Mutex<[DefaultsObservation]>([])
    /// ``Defect/prefixValuesCachedUntilKeysChange``: per prefix, the key set and the values.
    private let prefixCache = Mutex<[String: (keys: Set<String>, values: [String: DefaultsValue])]>([:])
    /// ``Defect/removeIfPresentAtomicOnlyInProcess``: one lock for the whole process.
    private static let processLock = Mutex(())

    public init(_ defect: Defect, directory: URL) throws(DefaultsError) {
        self.defect = defect
        core = try Core(defect, directory: directory)
    }

    deinit { core.writeUnwritten() }

    public var capabilities: DefaultsCapabilities {
        switch defect {
        case .misreportsCapabilities: [.persistent]
        case .capabilitiesChangeOnReopen where core.openedExisting: [.persistent, .atomicBatch, .multiProcess]
        default: .all
        }
    }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try core.read(key) }
    public func keys() throws(DefaultsError) -> [String] { try core.keys() }
    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] { try core.allValues() }

    public func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        if defect == .prefixIgnoresASCIICase { return DefaultsKeyPrefix.sorted(try core.keys().filter { Defect.startsIgnoringASCIICase($0, prefix) }) }
        guard defect == .prefixByGraphemes else { return DefaultsKeyPrefix.sorted(try core.keys().filter(DefaultsKeyPrefix(prefix).contains)) }
        return DefaultsKeyPrefix.sorted(try core.keys().filter { $0.hasPrefix(prefix) })
    }

    public func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        if defect == .prefixIgnoresASCIICase { return try core.allValues().filter { Defect.startsIgnoringASCIICase($0.key, prefix) } }
        if defect == .prefixValuesCachedUntilKeysChange {
            // A cache per prefix, kept while the store's key set is the one it was built from.
            let keys = Set(try core.keys())
            if let cached = prefixCache.withLock({ $0[prefix] }), cached.keys == keys { return cached.values }
            let values = try core.allValues().filter { DefaultsKeyPrefix(prefix).contains($0.key) }
            prefixCache.withLock { $0[prefix] = (keys, values) }
            return values
        }
        guard defect == .prefixByGraphemes else { return try core.allValues().filter { DefaultsKeyPrefix(prefix).contains($0.key) } }
        return try core.allValues().filter { $0.key.hasPrefix(prefix) }
    }
    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) { try core.write([.set(key, value)], single: true) }
    public func removeValue(forKey key: String) throws(DefaultsError) { try core.write([.remove(key)], single: true) }
    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try core.write(changes, single: false) }
    public func removeAll() throws(DefaultsError) { try core.removeAll() }

    /// Its file, or (``Defect/identityPerInstance``) a name of this instance's own.
    public var storeIdentity: DefaultsStoreIdentity? {
        defect == .identityPerInstance
            ? .named("\(ObjectIdentifier(self).hashValue)", backend: "BrokenFileProvider") : .files(core.file.path)
    }

    public func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError) {
        if defect == .asyncWritesReportNothing { return try core.write(changes, single: false, silent: true) }
        try apply(defect == .applyAsyncDropsRemovals ? changes.filter { $0.value != nil } : changes)
    }

    public func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        try core.write([.set(key, value)], single: true, silent: defect == .asyncWritesReportNothing, rawKeys: defect == .asyncSkipsCanonicalKeys)
    }

    public func removeValueAsync(forKey key: String) async throws(DefaultsError) {
        try core.write([.remove(key)], single: true, silent: defect == .asyncWritesReportNothing, rawKeys: defect == .asyncSkipsCanonicalKeys)
    }

    public func removeAllAsync() async throws(DefaultsError) {
        try core.removeAll(silent: defect == .asyncWritesReportNothing)
    }

    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        let defect = defect
        let changes = try core.validatedAll(changes)
        var conditions: [(RawKey, DefaultsValue?)] = []
        for (key, value) in expected { conditions.append((try defect.storageKey(key), value.map { defect.stored($0) })) }
        var applied = false
        try core.update { values in
            applied = conditions.allSatisfy { key, value in defect.sameForComparison(values[key], value) }
            return applied ? changes : []
        }
        return applied
    }

    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        if defect == .removeIfPresentAtomicOnlyInProcess {
            // Read, then remove, under a lock of this process only.
            return try Self.processLock.withLock { _ throws(DefaultsError) in
                guard try core.read(key) != nil else { return false }
                usleep(300)
                try core.write([.remove(key)], single: true)
                return true
            }
        }
        if defect == .removeValueIfPresentBySpelling, key.isEmpty { throw defect.emptyKeyError(for: nil) }
        let stored = defect == .removeValueIfPresentBySpelling ? RawKey(key) : try defect.storageKey(key)
        var present = false
        try core.update { values in
            present = values[stored] != nil
            return present ? [Change(key: stored, spelling: key, value: nil)] : []
        }
        return present
    }

    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        let defect = defect
        if defect == .removeIfPresentAtomicOnlyInProcess {
            return try Self.processLock.withLock { _ throws(DefaultsError) in
                let current = try core.allValues()
                var unchanged: [String] = []
                for (key, value) in expected {
                    let canonical = try defect.storageKey(key).string
                    if current[canonical] == value { unchanged.append(canonical) }
                }
                usleep(300)
                try core.write(unchanged.map { .remove($0) }, single: false)
                return unchanged.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            }
        }
        var conditions: [(RawKey, DefaultsValue)] = []
        for (key, value) in expected { conditions.append((try defect.storageKey(key), defect.stored(value))) }
        var removed: [RawKey] = []
        try core.update { values in
            removed = conditions.filter { key, value in
                defect == .removesRegardlessOfValue ? values[key] != nil : defect.sameForComparison(values[key], value)
            }.map(\.0)
            return removed.map { Change(key: $0, spelling: $0.string, value: nil) }
        }
        return removed.map(\.string).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        core.startWatching()
        let inner = core.observe(handler)
        switch defect {
        case .externalEventsToFirstObserverOnly:
            let id = ObjectIdentifier(inner)
            let first = core.firstObserver.withLock { first in
                if first == nil { first = (id, handler) }
                return first?.id == id
            }
            guard first else { return inner }
            return DefaultsObservation { [core] in
                inner.cancel()
                core.firstObserver.withLock { if $0?.id == id { $0 = nil } }
            }
        case .oneObserverOnly:
            let previous = held.withLock { held in
                defer { held = [inner] }
                return held
            }
            for observation in previous { observation.cancel() }
            return inner
        case .cancelStopsEveryObserver:
            held.withLock { $0.append(inner) }
            return DefaultsObservation { [weak self] in
                for observation in self?.held.withLock({ $0 }) ?? [] { observation.cancel() }
            }
        case .keepsReleasedObservations:
            held.withLock { $0.append(inner) }
            return inner
        default:
            return inner
        }
    }
}

/// A change after validation: the key as stored, as spelled, and the value as stored.
struct Change: Sendable {
    var key: RawKey
    var spelling: String
    var value: DefaultsValue?
}

/// Everything an instance shares with its watcher thread.
final class Core: Sendable {
    typealias Handler = @Sendable (DefaultsChangeEvent) -> Void

    struct State {
        var loaded = false
        var generation: UInt64 = 0
        var size = -1
        var values: [RawKey: DefaultsValue] = [:]
        /// Keys in the order they were written, each write appended (``Defect/listsOverwrittenKeysTwice``).
        var order: [RawKey] = []
        var readCache: [RawKey: DefaultsValue?] = [:]
        var snapshot: [String: DefaultsValue]?
        /// When the file was last read (``Defect/synchronizeDoesNothing``).
        var readAt = ContinuousClock.now
    }

    let defect: Defect
    let file: StoreFile
    let fileLock: FileLock
    let mirror: ProcessMirror?
    let openedExisting: Bool
    let clearedMarker: String
    let state = Mutex(State())
    let broadcaster = ChangeBroadcaster()
    /// Handlers called directly by each writer (``Defect/deliversOnWriterThreads``).
    let direct = Mutex<(next: Int, handlers: [Int: Handler])>((0, [:]))
    /// Held for a whole operation, delivery included (``Defect/callsHandlersUnderLock``).
    let operationLock = NSRecursiveLock()
    /// How deeply each thread is inside a delivery (a handler's own reads deliver too).
    let delivering = Mutex<[ObjectIdentifier: Int]>([:])
    let watching = Atomic<Bool>(false)
    /// The key index ``Defect/rebuildsKeyIndexInTwoSteps`` lists; `nil` until the first write.
    let keyIndex = Mutex<[String]?>(nil)
    /// ``Defect/publishesBatchKeyByKey``: keys of a committed batch not shown yet, with the value readers still see.
    let unpublished = Mutex<[RawKey: DefaultsValue?]>([:])
    /// ``Defect/externalEventsToFirstObserverOnly``: the observer the watcher reports to.
    let firstObserver = Mutex<(id: ObjectIdentifier, handler: Handler)?>(nil)

    init(_ defect: Defect, directory: URL) throws(DefaultsError) {
        self.defect = defect
        file = StoreFile(directory: directory)
        fileLock = try FileLock(path: file.lockPath)
        clearedMarker = directory.appendingPathComponent("store.cleared").path
        openedExisting = FileManager.default.fileExists(atPath: file.path)
        if defect == .forgetsOnReopen { unlink(file.path) }
        if defect == .dropsWritesAfterRemoveAllOnReopen, FileManager.default.fileExists(atPath: clearedMarker) {
            unlink(clearedMarker)
            try file.write(generation: 1, entries: [])
        }
        let file = file
        switch defect {
        case .keepsDataForProcessLifetime:
            mirror = try ProcessMirror.shared(for: file.path) { () throws(DefaultsError) in (0, [:]) }
        case .removalsOnlyInMemory, .keepsLargeValuesInMemory, .privateCopyPerProcess, .defersCommitToNextWrite:
            mirror = try ProcessMirror.shared(for: file.path) { () throws(DefaultsError) in
                let loaded = try file.load()
                return (loaded.generation, Dictionary(loaded.entries, uniquingKeysWith: { $1 }))
            }
        default:
            mirror = nil
        }
        try state.withLock { state throws(DefaultsError) in _ = try refresh(&state) }
    }

    // MARK: Reading

    /// Brings `state` up to the store's current generation; returns the external events.
    func refresh(_ state: inout State, writing: Bool = false) throws(DefaultsError) -> [DefaultsChangeEvent] {
        if let mirror {
            let (generation, values) = mirror.contents.withLock { ($0.generation, $0.values) }
            if state.loaded, generation == state.generation { return [] }
            return adopt(&state, generation: generation, size: -1, values: values)
        }
        if state.loaded, defect == .writesBackPrivateCopy || defect == .neverReloadsOpenInstance { return [] }
        if state.loaded, defect == .synchronizeDoesNothing, !writing {
            // Like a store that reads its file again on a timer and lets synchronize() do nothing.
            guard ContinuousClock.now - state.readAt >= .milliseconds(300) else { return [] }
            state.readAt = .now
        }
        let stamp = try file.stamp()
        if state.loaded, defect == .reloadsOnlyWhenSizeChanges ? stamp.size == state.size : stamp.generation == state.generation {
            return []
        }
        let loaded = try file.load()
        return adopt(&state, generation: loaded.generation, size: loaded.size, values: Dictionary(loaded.entries, uniquingKeysWith: { $1 }))
    }

    /// Takes `values` as the store's contents; the differences are external events.
    private func adopt(_ state: inout State, generation: UInt64, size: Int, values: [RawKey: DefaultsValue]) -> [DefaultsChangeEvent] {
        let old = state.values
        let wasLoaded = state.loaded
        state.values = values
        state.generation = generation
        state.size = size
        state.loaded = true
        if defect == .listsOverwrittenKeysTwice { state.order = Array(values.keys) }
        state.snapshot = nil
        guard wasLoaded, defect != .detectsNoExternalChanges else { return [] }
        let origin: DefaultsChangeEvent.Origin = defect == .marksExternalEventsLocal ? .local : .external
        var events: [DefaultsChangeEvent] = []
        if defect == .reportsEveryKeyOnExternalChange, old != values {
            events = values.map { DefaultsChangeEvent(key: $0.key.string, newValue: $0.value, origin: origin) }
        } else {
            for (key, value) in values where old[key] != value {
                events.append(DefaultsChangeEvent(key: key.string, newValue: value, origin: origin))
            }
        }
        if defect != .reportsNoExternalRemovals {
            for key in old.keys where values[key] == nil {
                events.append(DefaultsChangeEvent(key: key.string, newValue: nil, origin: origin))
            }
        }
        return events.sorted { $0.key < $1.key }
    }

    func read(_ key: String) throws(DefaultsError) -> DefaultsValue? {
        if key.isEmpty, defect != .acceptsEmptyKey { throw defect.emptyKeyError(for: nil) }
        if defect == .longKeyLookupsFailWithIOFailure, key.utf8.count > 8_192 {
            // The engine's key limit, hit by the lookup: its error passed on as it is.
            throw DefaultsError(.ioFailure, "The lookup failed (key too large for the engine).", backend: StoreFile.backend, key: key)
        }
        let stored = try defect.storageKey(key)
        let value = try operation { () throws(DefaultsError) in
            try state.withLock { state throws(DefaultsError) -> (DefaultsValue?, [DefaultsChangeEvent]) in
                var events = try refresh(&state)
                if defect == .readsSwallowExternalEvents { events = [] }
                if defect == .publishesBatchKeyByKey, let shown = unpublished.withLock({ $0[stored] }) { return (shown, events) }
                let cacheKey: RawKey? = switch defect {
                case .batchesSkipReadCache: stored
                case .readCacheKeyedBySpelling: RawKey(key)
                default: nil
                }
                guard let cacheKey else { return (state.values[stored], events) }
                if let cached = state.readCache[cacheKey] { return (cached, events) }
                state.readCache[cacheKey] = .some(state.values[stored])
                return (state.values[stored], events)
            }
        }
        return value.map(defect.read)
    }

    func keys() throws(DefaultsError) -> [String] {
        if defect == .rebuildsKeyIndexInTwoSteps, let listed = keyIndex.withLock({ $0 }) { return listed }
        var keys = try operation { () throws(DefaultsError) in
            try state.withLock { state throws(DefaultsError) in
                var events = try refresh(&state)
                if defect == .readsSwallowExternalEvents { events = [] }
                if defect == .publishesBatchKeyByKey {
                    var shown = state.values
                    for (key, value) in unpublished.withLock({ $0 }) { shown[key] = value }
                    return (shown.keys.map(\.string), events)
                }
                return ((defect == .listsOverwrittenKeysTwice ? state.order : Array(state.values.keys)).map(\.string), events)
            }
        }
        if defect == .keysMissOne, !keys.isEmpty {
            keys.sort()
            keys.removeLast()
        }
        return keys
    }

    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try operation { () throws(DefaultsError) in
            try state.withLock { state throws(DefaultsError) in
                var events = try refresh(&state)
                if defect == .readsSwallowExternalEvents { events = [] }
                if defect == .allValuesStaleAfterRemoval, let snapshot = state.snapshot { return (snapshot, events) }
                var values = state.values
                if defect == .publishesBatchKeyByKey { for (key, value) in unpublished.withLock({ $0 }) { values[key] = value } }
                let all = Dictionary(values.map { ($0.key.string, defect.read($0.value)) }, uniquingKeysWith: { first, _ in first })
                state.snapshot = all
                return (all, events)
            }
        }
    }

    // MARK: Writing

    func write(_ changes: [DefaultsChange], single: Bool, silent: Bool = false, rawKeys: Bool = false) throws(DefaultsError) {
        if defect == .dropsWritesFromHandlers, delivering.withLock({ $0[ObjectIdentifier(Thread.current)] != nil }) { return }
        if defect == .validatesBatchLazily {
            // The changes before the first bad one are written (in one commit: change by change,
            // a batch of 10 007 rewrites the file 10 007 times and the group takes minutes).
            var valid: [Change] = []
            var rejection: DefaultsError?
            for change in changes {
                do throws(DefaultsError) { valid.append(try validated(change)) } catch { rejection = error; break }
            }
            if !valid.isEmpty { try operation { () throws(DefaultsError) in try commit(valid, single: single) } }
            if let rejection { throw rejection }
            return
        }
        var batch: [Change] = []
        for change in changes {
            do throws(DefaultsError) {
                batch.append(try validated(change, rawKey: rawKeys))
            } catch {
                // A batch's error names its first key, whichever change was rejected.
                if defect == .batchErrorNamesFirstKey, !single, error.code == .invalidValue, let first = changes.first?.key, first != change.key {
                    throw DefaultsError(error.code, error.message, backend: error.backend, key: first)
                }
                throw error
            }
        }
        if defect == .dropsBatchRemainder, batch.count > 1_000 { batch = Array(batch.prefix(batch.count / 1_000 * 1_000)) }
        if defect == .appliesRemovalsFirst {
            batch = batch.filter { $0.value == nil } + batch.filter { $0.value != nil }
        }
        if defect == .tearsLargeValues {
            // Large strings go out in two steps: half of the string first.
            let halves = batch.compactMap { change -> Change? in
                guard case .string(let text)? = change.value, text.utf8.count > 16_384 else { return nil }
                return Change(key: change.key, spelling: change.spelling, value: .string(String(text.prefix(text.count / 2))))
            }
            if !halves.isEmpty { try operation { () throws(DefaultsError) in try commit(halves, single: single) } }
        }
        try operation(silent: silent) { () throws(DefaultsError) in try commit(batch, single: single) }
        if defect == .publishesBatchKeyByKey {
            // Committed whole; shown to this instance's readers one key at a time.
            for change in batch {
                unpublished.withLock { _ = $0.removeValue(forKey: change.key) }
                usleep(20)
            }
        }
        if defect == .rebuildsKeyIndexInTwoSteps {
            // Emptied, then refilled: a listing in between misses keys it listed before.
            keyIndex.withLock { $0 = [] }
            sched_yield()
            let keys = state.withLock { Array($0.values.keys).map(\.string) }
            keyIndex.withLock { $0 = keys }
        }
    }

    func removeAll(silent: Bool = false) throws(DefaultsError) {
        try operation(silent: silent) { () throws(DefaultsError) in
            try state.withLock { state throws(DefaultsError) -> ((), [DefaultsChangeEvent]) in
                let known = state.values
                let external = try refresh(&state)
                let keys = state.values.keys.filter { defect != .removeAllKeepsNonASCIIKeys || $0.string.utf8.allSatisfy { $0 < 0x80 } }
                    .filter { defect != .removeAllOnlyKnownKeys || known[$0] != nil }
                let local = try commitLocked(&state, keys.map { Change(key: $0, spelling: $0.string, value: nil) }, single: false)
                state.readCache = [:]
                return ((), external + (defect == .removeAllReportsNothing ? [] : local))
            }
        }
        if defect == .dropsWritesAfterRemoveAllOnReopen { _ = FileManager.default.createFile(atPath: clearedMarker, contents: Data()) }
        if defect == .publishesBatchKeyByKey { unpublished.withLock { $0.removeAll() } }
    }

    /// Applies the changes `decide` chooses from the values stored now, under the locks every
    /// writer takes: compare-and-set. With ``Defect/compareAndSetNotAtomic`` it decides from a
    /// read made before, and another writer may come between.
    func update(_ decide: @escaping Decision) throws(DefaultsError) {
        if defect == .compareAndSetNotAtomic {
            let values = try state.withLock { state throws(DefaultsError) in
                _ = try refresh(&state)
                return state.values
            }
            usleep(300)
            let changes = try decide(values)
            if !changes.isEmpty { try operation { () throws(DefaultsError) in try commit(changes, single: false) } }
            return
        }
        try operation { () throws(DefaultsError) in
            let events = try state.withLock { state throws(DefaultsError) in try commitLocked(&state, [], single: false, decide: decide) }
            return ((), defect == .conditionalWritesReportNothing ? [] : events)
        }
        if defect == .publishesBatchKeyByKey { unpublished.withLock { $0.removeAll() } }
    }

    /// The changes as stored: validated, keys as the store keeps them.
    func validatedAll(_ changes: [DefaultsChange]) throws(DefaultsError) -> [Change] {
        var validated: [Change] = []
        for change in changes { validated.append(try self.validated(change)) }
        return validated
    }

    private func validated(_ change: DefaultsChange, rawKey: Bool = false) throws(DefaultsError) -> Change {
        if change.key.isEmpty, defect != .acceptsEmptyKey { throw defect.emptyKeyError(for: change.value) }
        if defect == .longKeyLookupsFailWithIOFailure, change.key.utf8.count > 8_192 {
            // Checked before a set; a removal reaches the engine, which fails.
            if change.value != nil { throw DefaultsError(.invalidKey, "Keys are limited to 8 KiB.", backend: StoreFile.backend, key: change.key) }
            throw DefaultsError(.ioFailure, "The deletion failed (key too large for the engine).", backend: StoreFile.backend, key: change.key)
        }
        let key = rawKey ? RawKey(change.key) : try defect.storageKey(change.key)
        try defect.check(change.value, key: change.key)
        if defect == .recursesDeeplyOnSmallStacks, let value = change.value { _ = Defect.walkWithLargeFrames(value) }
        return Change(key: key, spelling: change.key, value: change.value.map { defect.stored($0) })
    }

    /// Commits `changes` as one generation; the events it makes.
    private func commit(_ changes: [Change], single: Bool) throws(DefaultsError) -> ((), [DefaultsChangeEvent]) {
        switch defect {
        case .losesConcurrentUpdates:
            // Read, modify and write without holding the lock in between.
            var copy = try state.withLock { state throws(DefaultsError) in _ = try refresh(&state); return state }
            usleep(200)
            let events = try commitLocked(&copy, changes, single: single)
            state.withLock { $0 = copy }
            return ((), events)
        case .busyUnderContention:
            let result = try state.withLockIfAvailable { state throws(DefaultsError) in try commitLocked(&state, changes, single: single) }
            guard let result else { throw DefaultsError(.busy, "The store is locked by another writer.", backend: StoreFile.backend) }
            return ((), result)
        default:
            return ((), try state.withLock { state throws(DefaultsError) in try commitLocked(&state, changes, single: single) })
        }
    }

    /// Applies `changes` to the store while holding the instance's lock.
    /// `decide`, when given, chooses the changes from the values stored once the locks are held
    /// (a compare-and-set), instead of `changes`.
    private func commitLocked(
        _ state: inout State, _ changes: [Change], single: Bool, decide: Decision? = nil
    ) throws(DefaultsError) -> [DefaultsChangeEvent] {
        if let mirror {
            return try mirror.serial.withLock { _ throws(DefaultsError) in try commitHoldingLocks(&state, changes, single: single, decide: decide) }
        }
        let locking = defect != .noLockBetweenProcesses
        if locking { fileLock.lock() }
        defer { if locking { fileLock.unlock() } }
        return try commitHoldingLocks(&state, changes, single: single, decide: decide)
    }

    typealias Decision = ([RawKey: DefaultsValue]) throws(DefaultsError) -> [Change]

    private func commitHoldingLocks(
        _ state: inout State, _ changes: [Change], single: Bool, decide: Decision? = nil
    ) throws(DefaultsError) -> [DefaultsChangeEvent] {
        let external = try refresh(&state, writing: true)
        var base = state.values
        if defect == .neverReloadsOpenInstance {
            // Writes merge with the file (no update is lost), but the instance's view is never refreshed.
            base = Dictionary(try file.load().entries, uniquingKeysWith: { $1 })
        }
        var changes = changes
        if let decide { changes = try decide(base) }
        if defect == .noLockBetweenProcesses { usleep(300) }
        var values = base
        var view = state.values
        var order = state.order
        var local: [DefaultsChangeEvent] = []
        for change in changes {
            if let value = change.value {
                if defect == .listsOverwrittenKeysTwice { order.append(change.key) }
                if values[change.key] == value, view[change.key] == value, defect != .eventsForNoOps { continue }
                if defect == .noOpCheckMergesEquivalentStrings, let old = values[change.key], defect.looselyEqual(old, value, depth: 0) { continue }
                values[change.key] = value
                view[change.key] = value
                local.append(DefaultsChangeEvent(key: change.key.string, newValue: value))
            } else {
                let matched = defect == .removesByPattern || defect == .removesByPrefix
                    ? view.keys.filter { defect.removal(of: change.key, removes: $0) }
                    : (view[change.key] == nil ? [] : [change.key])
                if matched.isEmpty {
                    if defect == .removeAbsentThrows {
                        throw DefaultsError(.notFound, "There is no such key.", backend: StoreFile.backend, key: change.spelling)
                    }
                    if defect == .eventsForNoOps { local.append(DefaultsChangeEvent(key: change.key.string, newValue: nil)) }
                }
                for key in matched {
                    values[key] = nil
                    view[key] = nil
                    if defect == .listsOverwrittenKeysTwice { order.removeAll { $0 == key } }
                    local.append(DefaultsChangeEvent(key: key.string, newValue: nil))
                }
            }
        }
        guard !local.isEmpty else { return external }
        let generation = max(state.generation, try mirror == nil ? file.stamp().generation : 0) + 1
        let stepwise = defect == .commitsBatchChangeByChange || (defect == .conditionalBatchCommittedChangeByChange && decide != nil)
        let size = try persist(values, generation: generation, changes: changes, previous: base, stepwise: stepwise)
        let previous = (state.values, state.generation, state.size)
        if defect == .publishesBatchKeyByKey, changes.count > 1 {
            unpublished.withLock { shown in
                for change in changes where shown[change.key] == nil { shown[change.key] = .some(state.values[change.key]) }
            }
        }
        state.values = view
        state.order = order
        state.generation = generation + (stepwise ? UInt64(changes.count - 1) : 0)
        state.size = size
        if changes.contains(where: { $0.value != nil }) { state.snapshot = nil }
        switch defect {
        case .batchesSkipReadCache where single, .readCacheKeyedBySpelling:
            for change in changes {
                state.readCache[defect == .readCacheKeyedBySpelling ? RawKey(change.spelling) : change.key] = .some(change.value)
            }
        case .reportsOwnWritesAsExternalToo:
            // Forgets having written, so that the next reload reports the write again.
            (state.values, state.generation, state.size) = previous
        default: break
        }
        if defect == .noChangeEvents { return [] }
        return external + (defect == .sortsBatchEvents ? local.sorted { $0.key < $1.key } : local)
    }

    /// Writes a new generation as the defect does; the file's new size (or -1).
    private func persist(
        _ values: [RawKey: DefaultsValue], generation: UInt64, changes: [Change], previous: [RawKey: DefaultsValue], stepwise: Bool = false
    ) throws(DefaultsError) -> Int {
        let entries = values.map { ($0.key, $0.value) }
        if let mirror {
            let written: [(RawKey, DefaultsValue)]?
            switch defect {
            case .keepsDataForProcessLifetime: written = nil
            case .removalsOnlyInMemory:
                // Sets reach the file; removals never do.
                var onDisk = Dictionary(try file.load().entries, uniquingKeysWith: { $1 })
                for change in changes { if let value = change.value { onDisk[change.key] = value } }
                written = onDisk.map { ($0.key, $0.value) }
            case .keepsLargeValuesInMemory: written = entries.filter { BinaryValueCodec.encode($0.1).count <= 1 << 20 }
            case .defersCommitToNextWrite:
                written = mirror.contents.withLock { $0.unwritten }
                mirror.contents.withLock { $0.unwritten = entries }
            default: written = entries
            }
            mirror.contents.withLock {
                $0.generation = generation
                $0.values = values
            }
            if let written { try file.write(generation: generation, entries: written) }
            return -1
        }
        switch defect {
        case _ where stepwise:
            // Every change its own durable commit (``Defect/conditionalBatchCommittedChangeByChange``:
            // only a compare-and-set's, as a loop of conditional updates in autocommit mode).
            var partial = previous
            for (index, change) in changes.enumerated() {
                partial[change.key] = change.value
                try file.write(generation: generation + UInt64(index), entries: partial.map { ($0.key, $0.value) })
            }
            return -1
        case .rewritesFileInPlace:
            try file.write(generation: generation, entries: entries, inPlace: true)
        default:
            try file.write(generation: generation, entries: entries)
        }
        return StoreFile.bytes(generation: generation, entries: entries).count
    }

    /// Writes what ``Defect/defersCommitToNextWrite`` kept back.
    func writeUnwritten() {
        guard let mirror, defect == .defersCommitToNextWrite else { return }
        let (generation, unwritten) = mirror.contents.withLock { contents in
            defer { contents.unwritten = nil }
            return (contents.generation, contents.unwritten)
        }
        if let unwritten { try? file.write(generation: generation, entries: unwritten) }
    }

    // MARK: Events

    /// Runs one operation that returns events: queued (or, for one defect, kept for direct
    /// delivery) under the state lock, delivered after it.
    private func operation<T>(silent: Bool = false, _ body: () throws(DefaultsError) -> (T, [DefaultsChangeEvent])) throws(DefaultsError) -> T {
        let lockAll = defect == .callsHandlersUnderLock
        if lockAll { operationLock.lock() }
        defer { if lockAll { operationLock.unlock() } }
        var (result, events) = try body()
        if silent { events = [] }
        if defect == .dropsEventsOfLargeBatches, events.count > 64 { events = Array(events.prefix(64)) }
        if defect == .deliversOnWriterThreads {
            // No ordering between writers: each calls the handlers itself, once unlocked.
            sched_yield()
            let handlers = direct.withLock { Array($0.handlers.values) }
            for event in events { for handler in handlers { handler(event) } }
        } else {
            broadcaster.enqueue(events)
            deliver()
        }
        return result
    }

    private func deliver() {
        guard defect == .dropsWritesFromHandlers else { return broadcaster.deliverPending() }
        let me = ObjectIdentifier(Thread.current)
        delivering.withLock { $0[me, default: 0] += 1 }
        broadcaster.deliverPending()
        delivering.withLock { depths in
            depths[me, default: 1] -= 1
            if depths[me] == 0 { depths[me] = nil }
        }
    }

    func observe(_ handler: @escaping Handler) -> DefaultsObservation {
        guard defect == .deliversOnWriterThreads else { return broadcaster.observe(handler) }
        let id = direct.withLock { direct in
            defer { direct.next += 1 }
            direct.handlers[direct.next] = handler
            return direct.next
        }
        return DefaultsObservation { [weak self] in _ = self?.direct.withLock { $0.handlers.removeValue(forKey: id) } }
    }

    /// Starts the thread that reloads the store while anyone observes, reporting what changed.
    func startWatching() {
        guard defect != .detectsNoExternalChanges, !watching.exchange(true, ordering: .relaxed) else { return }
        Thread.detachNewThread { [weak self] in
            while true {
                do {
                    guard let core = self else { return }
                    core.poll()
                }
                usleep(4_000)
            }
        }
    }

    private func poll() {
        guard broadcaster.hasObservers || !direct.withLock({ $0.handlers.isEmpty }) else { return }
        if defect == .externalEventsToFirstObserverOnly {
            // The watcher was set up for the first observer, and reports to it alone.
            guard let events = try? state.withLock({ state throws(DefaultsError) in try refresh(&state) }) else { return }
            guard let handler = firstObserver.withLock({ $0?.handler }) else { return }
            for event in events { handler(event) }
            return
        }
        _ = try? operation { () throws(DefaultsError) in
            ((), try state.withLock { state throws(DefaultsError) in try refresh(&state) })
        }
    }
}
