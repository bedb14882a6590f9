import AnyDefaultsCore
import Synchronization

/// The state that every ``JSONFileProvider`` on one file in this process shares: the values in
/// memory, the file side, and the observers of each instance.
///
/// Two locks: `disk` serializes everything that touches the file (and is held during its I/O),
/// `memory` guards the values and is held only for moments, so that reads never wait for a
/// write's `fsync`. The order is always `disk`, then `memory`.
final class JSONFileStore: Sendable {
    let path: String
    private let disk: Mutex<JSONFileDisk>
    private let memory: Mutex<Memory>
    private let monitor = Mutex<FileChangeMonitor?>(nil)
    /// Each instance's broadcaster.
    private let listeners = InstanceListeners()

    private struct Memory {
        var values: [String: DefaultsValue]
        /// When the file was last checked for changes by a read.
        var lastCheck = ContinuousClock.now
    }

    /// A bad file that loading moved aside, for the opener to report once no lock is held.
    let initialRecovery: JSONFileRecovery?

    /// Loads the file at `path` (a canonical path); a bad file throws unless `options` ask to
    /// move it aside, which ``initialRecovery`` then tells.
    init(path: String, options: JSONFileProvider.Options) throws(DefaultsError) {
        self.path = path
        AtomicFile.removeAbandonedTemporaryFiles(of: path)
        var disk = JSONFileDisk(path: path)
        let contents = try disk.readIfChanged(options, holdingLock: false) ?? .init(values: [:])
        self.disk = Mutex(disk)
        memory = Mutex(Memory(values: contents.values))
        initialRecovery = contents.recovery
    }

    // MARK: Instances and events

    /// Registers an instance's broadcaster; events of other instances reach it as external.
    func attach(_ broadcaster: ChangeBroadcaster) -> Int {
        listeners.register(broadcaster)
    }

    func detach(_ instance: Int) {
        listeners.unregister(instance)
    }

    /// Starts reloading the file whenever it changes on disk, so that changes made by other
    /// processes reach memory and observers without waiting for this process's next write.
    /// inotify on Linux; where that is refused or unavailable, a `stat` poll every 100 ms.
    func watchForExternalChanges() {
        monitor.withLock { monitor in
            guard monitor == nil else { return }
            let onChange: @Sendable () -> Void = { [weak self] in self?.reloadAfterOutsideChange() }
            monitor = (try? FileChangeMonitor(watching: [path], backend: JSONFileProvider.backend, onChange: onChange))
                ?? (try? FileChangeMonitor(
                    watching: [path], strategy: .polling(interval: .milliseconds(100)), backend: JSONFileProvider.backend,
                    onChange: onChange))
        }
    }

    /// A bad file is left for the next operation to report: nothing is moved aside from here,
    /// where no one could be told.
    private func reloadAfterOutsideChange() {
        try? reload(options: JSONFileProvider.Options(corruptionPolicy: .fail))
    }

    // MARK: Reading

    func value(forKey key: String) -> DefaultsValue? {
        memory.withLock { $0.values[key] }
    }

    func values() -> [String: DefaultsValue] {
        memory.withLock { $0.values }
    }

    /// Checks the file for changes made elsewhere if `interval` has passed since the last check.
    /// Skipped while a write is under way: the write reads the file itself.
    func refresh(ifOlderThan interval: Duration, options: JSONFileProvider.Options) throws(DefaultsError) {
        let now = ContinuousClock.now
        guard memory.withLock({ now - $0.lastCheck >= interval }) else { return }
        let outcome = try disk.withLockIfAvailable { disk throws(DefaultsError) -> Outcome in
            memory.withLock { $0.lastCheck = now }
            return try install(disk.readIfChanged(options, holdingLock: false))
        }
        if let outcome { finish(outcome, options) }
    }

    /// Reads the file again if it changed since this process last read or wrote it.
    func reload(options: JSONFileProvider.Options) throws(DefaultsError) {
        let outcome = try disk.withLock { disk throws(DefaultsError) -> Outcome in
            try install(disk.readIfChanged(options, holdingLock: false))
        }
        finish(outcome, options)
    }

    // MARK: Writing

    /// Runs one read-modify-write under both the process's and the other processes' locks:
    /// brings the values up to date with the file, lets `change` compute the new values and
    /// the events, and writes the file once, unless nothing changed.
    func update(
        from instance: Int, options: JSONFileProvider.Options,
        _ change: ([String: DefaultsValue]) -> (values: [String: DefaultsValue], events: [DefaultsChangeEvent])
    ) throws(DefaultsError) {
        let outcome = try disk.withLock { disk throws(DefaultsError) -> Outcome in
            try disk.acquireLock(options)
            defer { disk.lock.unlock() }
            let outcome = try install(disk.readIfChanged(options, holdingLock: true))
            let (values, events) = change(memory.withLock { $0.values })
            guard !events.isEmpty else { return outcome }
            try disk.write(values)
            memory.withLock { memory in
                memory.values = values
                listeners.enqueue(events, from: instance)
            }
            return outcome
        }
        finish(outcome, options)
    }

    // MARK: Helpers

    /// What install found beyond the values: a bad file it moved aside.
    private struct Outcome {
        var recovery: JSONFileRecovery?
    }

    /// What to do once the locks are released: deliver events, report a recovery.
    private func finish(_ outcome: Outcome, _ options: JSONFileProvider.Options) {
        listeners.deliverPending()
        if let recovery = outcome.recovery { options.onRecovery?(recovery) }
    }

    /// Takes in contents read from the file, with an external event for every key that differs
    /// from memory. Call it holding `disk`.
    private func install(_ contents: JSONFileDisk.Contents?) -> Outcome {
        guard let contents else { return Outcome() }
        memory.withLock { memory in
            listeners.enqueue(DefaultsChangeEvent.differences(from: memory.values, to: contents.values), from: nil)
            memory.values = contents.values
        }
        return Outcome(recovery: contents.recovery)
    }
}
