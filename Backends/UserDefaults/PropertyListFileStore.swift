#if !canImport(Darwin)
import AnyDefaultsCore
import Foundation
import Synchronization

/// One suite in this process on platforms where swift-corelibs-foundation keeps preferences in
/// plain files (Linux): the decoded content of the suite's property list, kept current with the
/// file, and the writes to it.
///
/// Writes do not go through `UserDefaults.set` and `synchronize()`, because Foundation there
/// rewrites the file in place (a crash or a concurrent reader can see it torn), writes the XML
/// format (which keeps neither the sign of `-0.0` nor fractions of a second in dates), silently
/// treats an unparsable file as empty and overwrites it, and takes no lock against other
/// processes. Instead a write, holding the preferences directory's lock, reads the current file,
/// applies the batch, writes a binary property list to a temporary file, syncs it, renames it over
/// the suite file, and then asks Foundation to synchronize the suite, which drops Foundation's
/// in-memory copy so that plain `UserDefaults` readers in this process see the new values.
final class PropertyListFileStore: Sendable {
    let file: PropertyListFile
    let suiteName: String?
    let listeners = InstanceListeners()

    private struct State {
        /// The suite's values as of `stamp`. Entries `DefaultsValue` cannot hold (written by
        /// other software) are left out here and left untouched in the file.
        var values: [String: DefaultsValue] = [:]
        /// The version of the file `values` reflects; `nil` when there is no file.
        var stamp: PropertyListFile.Stamp?
        /// Whether the file was modified so shortly before it was read that a later rewrite in
        /// place could leave the same stamp (file times are only as fine as the kernel's clock
        /// tick); such a stamp is not trusted, and the content is read again.
        var racy = false
        var loaded = false
        /// When the file was last examined, in monotonic nanoseconds.
        var checkedAt: UInt64 = 0
        /// The last damaged version of the file seen, so it is not parsed again and again.
        var damage: (error: DefaultsError, stamp: PropertyListFile.Stamp)?
    }

    private let state = Mutex(State())
    /// Watches the file for changes other processes make, once a provider asked for it.
    private let monitor = Mutex<FileChangeMonitor?>(nil)

    init(file: PropertyListFile, suiteName: String?) {
        self.file = file
        self.suiteName = suiteName
        if let target = try? FileReplacement.target(of: file.path) {
            FileReplacement.removeAbandonedTemporaryFiles(of: target)
        }
    }

    deinit {
        monitor.withLock { $0?.cancel() }
    }

    /// Starts watching the suite file, if not yet done, so that changes made by other processes
    /// are read and reported as they happen; returns whether the file is watched. Watching needs
    /// the preferences directory, which is created (as Foundation would on its first write).
    func watch() -> Bool {
        monitor.withLock { monitor in
            if monitor != nil { return true }
            do {
                try file.createDirectory()
                monitor = try FileChangeMonitor(watching: [file.path], backend: UserDefaultsProvider.backend) {
                    [weak self] in
                    // A damaged file is remembered and reported by the next read.
                    try? self?.refresh(options: UserDefaultsProvider.Options())
                }
                return true
            } catch {
                return false
            }
        }
    }

    var fileURL: URL? { URL(fileURLWithPath: file.path) }

    // MARK: Reading

    func value(forKey key: String, options: UserDefaultsProvider.Options) throws(DefaultsError) -> DefaultsValue? {
        let (value, notify) = try state.withLock { state throws(DefaultsError) in
            let notify = try refresh(&state, options: options, force: false)
            return (state.values[key], notify)
        }
        if notify { listeners.deliverPending() }
        return value
    }

    func allValues(options: UserDefaultsProvider.Options) throws(DefaultsError) -> [String: DefaultsValue] {
        let (values, notify) = try state.withLock { state throws(DefaultsError) in
            let notify = try refresh(&state, options: options, force: false)
            return (state.values, notify)
        }
        if notify { listeners.deliverPending() }
        return values
    }

    /// Re-reads the file now if it changed; reports changes made elsewhere to the observers.
    func refresh(options: UserDefaultsProvider.Options) throws(DefaultsError) {
        let notify = try state.withLock { state throws(DefaultsError) in
            try refresh(&state, options: options, force: true)
        }
        if notify { listeners.deliverPending() }
    }

    /// Brings `state` up to date with the file when `force` is set or the refresh interval has
    /// passed. Returns whether events were queued.
    private func refresh(_ state: inout State, options: UserDefaultsProvider.Options, force: Bool) throws(DefaultsError) -> Bool {
        let now = CoarseClock.nanoseconds
        if !force, state.loaded, now &- state.checkedAt < options.refreshInterval.clampedNanoseconds {
            return false
        }
        let stamp = try file.stamp()
        if state.loaded, stamp == state.stamp, !state.racy {
            state.checkedAt = now
            return false
        }
        if let damage = state.damage, damage.stamp == stamp, !options.recoverCorruptedFile {
            throw damage.error
        }
        let queued = try load(file.readContent(), into: &state, options: options, holding: nil).queued
        state.checkedAt = now
        return queued
    }

    /// Makes `content` the state, recovering a damaged file if the options say so, and queues
    /// events for what changed since the state was last loaded. Returns the file's top-level
    /// dictionary, so that a write can keep what it does not change.
    private func load(
        _ content: PropertyListFile.Content, into state: inout State,
        options: UserDefaultsProvider.Options, holding heldLock: PropertyListFile.DirectoryLock?
    ) throws(DefaultsError) -> (dictionary: [String: PropertyListNode], queued: Bool) {
        var content = content
        if case .corrupted(let error, let stamp) = content {
            guard options.recoverCorruptedFile else {
                state.damage = (error, stamp)
                throw error
            }
            // Recover under the directory lock, after reading again: another process may have
            // repaired or replaced the file meanwhile.
            let lock: PropertyListFile.DirectoryLock?
            if let heldLock {
                lock = heldLock
            } else {
                lock = try file.lockDirectory(timeout: options.lockTimeout, create: false)
            }
            if let lock {
                defer { if heldLock == nil { lock.unlock() } }
                content = try file.readContent()
                if case .corrupted = content {
                    _ = try file.moveAside(holding: lock)
                    dropFoundationCache()
                    content = .absent
                }
            } else {
                content = .absent
            }
        }
        let dictionary: [String: PropertyListNode]
        let stamp: PropertyListFile.Stamp?
        switch content {
        case .absent, .corrupted:
            (dictionary, stamp) = ([:], nil)
        case .dictionary(let parsed, let parsedStamp):
            (dictionary, stamp) = (parsed, parsedStamp)
        }
        let values = PropertyListNode.values(fromDomain: dictionary)
        let events = state.loaded ? DefaultsChangeEvent.differences(from: state.values, to: values) : []
        state.values = values
        state.stamp = stamp
        state.racy = stamp?.isRecent ?? false
        state.loaded = true
        state.damage = nil
        listeners.enqueue(events, from: nil)
        return (dictionary, !events.isEmpty)
    }

    // MARK: Writing

    /// Reads the file under the directory lock, lets `decide` choose the changes from the values
    /// it holds (`nil`: remove everything), and replaces the file once if they change anything
    /// (changes that store what is already stored are skipped). Returns the events of the
    /// changes made.
    @discardableResult
    func update(
        from writer: Int, options: UserDefaultsProvider.Options,
        _ decide: ([String: DefaultsValue]) -> [DefaultsChange]?
    ) throws(DefaultsError) -> [DefaultsChangeEvent] {
        let events = try state.withLock { state throws(DefaultsError) -> [DefaultsChangeEvent] in
            guard let lock = try file.lockDirectory(timeout: options.lockTimeout, create: true) else {
                throw DefaultsError(
                    .internalError, "The preferences directory could not be created.",
                    backend: UserDefaultsProvider.backend, path: file.directory)
            }
            defer { lock.unlock() }
            // Start from the file as it is now: other processes may have written it.
            var dictionary = try load(file.readContent(), into: &state, options: options, holding: lock).dictionary
            var values = state.values
            let changes = decide(values)
            var events: [DefaultsChangeEvent] = []
            var removedHidden = false
            if let changes {
                for change in changes {
                    switch change {
                    case .set(let key, let value):
                        guard values[key] != value else { continue }
                        values[key] = value
                        // Subscripting with the canonical key also finds an entry spelled in
                        // another normalization form: Swift compares Strings canonically.
                        dictionary[key] = PropertyListNode(value)
                        events.append(DefaultsChangeEvent(key: key, newValue: value))
                    case .remove(let key):
                        if dictionary.removeValue(forKey: key) != nil { removedHidden = true }
                        if values.removeValue(forKey: key) != nil {
                            events.append(DefaultsChangeEvent(key: key, newValue: nil))
                        }
                    }
                }
            } else {
                events = values.keys.map { DefaultsChangeEvent(key: $0, newValue: nil) }
                removedHidden = !dictionary.isEmpty
                values = [:]
                dictionary = [:]
            }
            guard !events.isEmpty || removedHidden else { return [] }
            state.stamp = try file.replace(with: dictionary, holding: lock)
            state.racy = state.stamp?.isRecent ?? false
            state.values = values
            state.checkedAt = CoarseClock.nanoseconds
            listeners.enqueue(events, from: writer)
            dropFoundationCache()
            // Synchronizing writes Foundation's own unsaved changes to this suite, if this process
            // made any through plain UserDefaults; take them in.
            if try file.stamp() != state.stamp {
                _ = try load(file.readContent(), into: &state, options: options, holding: lock)
            }
            return events
        }
        listeners.deliverPending()
        return events
    }

    /// Makes plain `UserDefaults` in this process read the file again: Foundation on Linux keeps
    /// a suite in memory once read, and `synchronize()` with nothing unsaved just drops that copy.
    private func dropFoundationCache() {
        Self.dropFoundationCache(suiteName: suiteName)
    }

    private static func dropFoundationCache(suiteName: String?) {
        if let suiteName {
            UserDefaults(suiteName: suiteName)?.synchronize()
        } else {
            UserDefaults.standard.synchronize()
        }
    }

    /// Removes the suite's file, as `removePersistentDomain(forName:)` would.
    static func removeSuite(_ file: PropertyListFile, suiteName: String?, lockTimeout: Duration) throws(DefaultsError) {
        guard let lock = try file.lockDirectory(timeout: lockTimeout, create: false) else { return }
        defer { lock.unlock() }
        _ = try file.replace(with: [:], holding: lock)
        // Writers of the suite replace its file under this lock: a temporary file of it now is one
        // a writer that died left behind (a writer killed mid-write), whatever its age.
        if let target = try? FileReplacement.target(of: file.path) {
            FileReplacement.removeAbandonedTemporaryFiles(of: target, olderThan: nil)
        }
        dropFoundationCache(suiteName: suiteName)
    }
}
#endif
