import AnyDefaultsPlatform
import Dispatch
import Synchronization

/// The pieces a backend uses to tell other processes exactly which keys it changed, in commit
/// order, through a change log kept in the store itself (the SQLite and LMDB backends do).
///
/// The scheme: a process that watches the store takes a *lease* (its ``processOrigin`` and an
/// expiry time, stored in the store) and renews it while it watches. A writer, inside each write
/// transaction, appends one entry per changed key (a sequence number one above the last, the key,
/// its own origin, the time) — but only while some *other* process holds a lease, so a store no
/// other process watches pays nothing. Old entries are pruned by the writers: every
/// ``pruneInterval``th entry, those both ``keptEntries`` behind and older than ``keptSeconds``.
/// A writer that logged entries rings the doorbell after its commit (``ringDoorbell(path:)``). A
/// watcher remembers the last sequence number it accounted for (its position), and when the
/// store's files change (``Watch``) reads the entries after it with ``read(_:after:skipping:)``.
///
/// ```swift
/// let reading = ChangeLog.read(entries, after: position, skipping: ChangeLog.processOrigin)
/// position = reading.end
/// let keys = reading.complete ? reading.keys : everyStoredKey + reading.keys
/// ```
package enum ChangeLog {
    /// The log keeps at least this many entries...
    package static let keptEntries: Int64 = 1024
    /// ...and every entry younger than this many seconds.
    package static let keptSeconds: Int64 = 60
    /// How often (in entries) old entries are pruned.
    package static let pruneInterval: Int64 = 256
    /// How long a watcher's lease lasts, in seconds; it is renewed every quarter of that.
    package static let leaseSeconds: Int64 = 120

    /// This process's mark in logs and leases: its process ID and random bits, so that a child
    /// forked from it, or a process with the same ID in another PID namespace, has another.
    package static var processOrigin: Int64 { Int64(getpid()) << 32 | Int64(processRandomBits) }
    private static let processRandomBits = UInt32.random(in: 1...UInt32.max)

    /// The current time as logs and leases keep it: whole seconds since 1970.
    package static var now: Int64 { Int64(time(nil)) }

    /// Wakes the watchers of the file at `path` (the ``Watch`` of other processes) by setting its
    /// times to now. A writer calls it after a commit that wrote log entries: the writes of a
    /// commit may wake a watcher before the commit is visible to readers (a descheduled writer, a
    /// flush in between), and nothing else touches the files once it is.
    ///
    /// Setting the times costs about as much as a small write, so a process ringing often rings at
    /// most once per ``doorbellInterval``: the first ring of a burst at once, then one more after
    /// the interval for the commits in between. A failure is ignored: the next commit wakes the
    /// watchers anyway.
    package static func ringDoorbell(path: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        let interval = doorbellInterval.clampedNanoseconds
        let action = doorbells.withLock { doorbells -> DoorbellAction in
            var state = doorbells[path] ?? DoorbellState()
            defer { doorbells[path] = state }
            if state.trailingRingScheduled { return .none }
            if now &- state.lastRing >= interval {
                state.lastRing = now
                return .now
            }
            state.trailingRingScheduled = true
            if doorbells.count > 64 { doorbells = doorbells.filter { now &- $0.value.lastRing < interval } }
            return .later
        }
        switch action {
        case .none:
            return
        case .now:
            _ = utimensat(AT_FDCWD, path, nil, 0)
        case .later:
            _ = ringPendingDoorbellsAtExit
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: interval))) {
                doorbells.withLock { $0[path] = DoorbellState(lastRing: DispatchTime.now().uptimeNanoseconds) }
                _ = utimensat(AT_FDCWD, path, nil, 0)
            }
        }
    }

    /// Rings every doorbell whose delayed ring has not happened yet: a process that exits right
    /// after a burst of commits must still wake the watchers for its last ones (watchers wake on
    /// doorbells only, not on the writes). Registered with `atexit` on the first delayed ring.
    private static let ringPendingDoorbellsAtExit: Void = {
        atexit {
            let pending = ChangeLog.doorbells.withLock { doorbells in
                let paths = doorbells.filter(\.value.trailingRingScheduled).map(\.key)
                for path in paths { doorbells[path]?.trailingRingScheduled = false }
                return paths
            }
            for path in pending { _ = utimensat(AT_FDCWD, path, nil, 0) }
        }
    }()

    /// How often ``ringDoorbell(path:)`` touches one file at most.
    package static let doorbellInterval = Duration.milliseconds(1)

    private struct DoorbellState {
        var lastRing: UInt64 = 0
        var trailingRingScheduled = false
    }

    private enum DoorbellAction { case none, now, later }

    /// The doorbells rung by this process, by path.
    private static let doorbells = Mutex<[String: DoorbellState]>([:])

    /// One entry of a log.
    package struct Entry: Sendable, Hashable {
        package var sequence: Int64
        package var key: String
        package var origin: Int64

        package init(sequence: Int64, key: String, origin: Int64) {
            self.sequence = sequence
            self.key = key
            self.origin = origin
        }
    }

    /// What a log tells a reader at some position.
    package struct Reading: Sendable, Hashable {
        /// The keys other processes changed after the position, each once, in the order of its
        /// last change.
        package var keys: [String]
        /// False when entries after the position are gone (pruned before the reader read them,
        /// or the log was emptied): then any stored key may have changed, beyond ``keys``.
        package var complete: Bool
        /// The reader's new position.
        package var end: Int64

        package init(keys: [String], complete: Bool, end: Int64) {
            (self.keys, self.complete, self.end) = (keys, complete, end)
        }

        /// The `.external` events to report: one per key in ``keys`` with the value `value` reads
        /// now, preceded, if the reading is not complete or `trusted` is false (the lease lapsed),
        /// by one for every key in `storedKeys` (all keys stored now), since any may have changed.
        package func events(
            trusted: Bool = true, storedKeys: () throws(DefaultsError) -> [String],
            value: (String) throws(DefaultsError) -> DefaultsValue?
        ) throws(DefaultsError) -> [DefaultsChangeEvent] {
            var keys = keys
            if !complete || !trusted {
                let logged = Set(keys)
                keys = try storedKeys().filter { !logged.contains($0) } + keys
            }
            var events: [DefaultsChangeEvent] = []
            events.reserveCapacity(keys.count)
            for key in keys {
                events.append(DefaultsChangeEvent(key: key, newValue: try value(key), origin: .external))
            }
            return events
        }
    }

    /// What a watcher found in a log after its position: the events to report, the position after
    /// them, and whether they are all that changed (else any stored key may have: the reading was
    /// not complete, or the lease had lapsed).
    package struct Report: Sendable {
        package var events: [DefaultsChangeEvent]
        package var end: Int64
        package var complete: Bool

        package init(events: [DefaultsChangeEvent], end: Int64, complete: Bool) {
            self.events = events
            self.end = end
            self.complete = complete
        }

        /// Tells the caches registered with `counter` what changed (see ``SharedChangeCounter``):
        /// the events' keys, or everything when the report is not complete. Call it before the
        /// position moves on.
        package func invalidate(in counter: SharedChangeCounter) {
            if complete {
                counter.invalidate(keysOf: events)
            } else {
                counter.invalidateAll()
            }
        }
    }

    /// Reads `entries`, in ascending order: the entry at `position` if it is still there, every
    /// later one, or, when the log's newest entry is older than the position (the log was emptied
    /// and restarted), that entry alone. Entries of `origin` (the reader's own) are left out.
    package static func read(_ entries: [Entry], after position: Int64, skipping origin: Int64) -> Reading {
        guard let first = entries.first, let last = entries.last else {
            // Pruning keeps the newest entry, so a log that is empty after a reader saw entries was
            // emptied by hand: what was in it is unknown.
            return Reading(keys: [], complete: position == 0, end: 0)
        }
        // `&+`: a position read from a damaged log may be `Int64.max`.
        let complete = first.sequence == position || first.sequence == position &+ 1
        var lastChange: [String: Int] = [:]
        for (index, entry) in entries.enumerated()
        where (entry.sequence > position || !complete) && entry.origin != origin && !entry.key.isEmpty {
            lastChange[entry.key] = index
        }
        let keys = lastChange.sorted { $0.value < $1.value }.map(\.key)
        return Reading(keys: keys, complete: complete, end: last.sequence)
    }

    /// A watcher's lease as it knows it: when it ends, and whether it lapsed (the process was
    /// suspended, or could not renew it in time), in which case other processes may have committed
    /// changes without logging them and the next reading counts as incomplete.
    package struct Lease: Sendable, Hashable {
        /// When the lease ends, in ``ChangeLog/now`` seconds.
        package private(set) var end: Int64
        /// Whether the lease lapsed since the log was last read.
        package var lapsed = false

        /// A lease just taken at `now`, until `now + leaseSeconds`.
        package init(takenAt now: Int64) {
            end = now + leaseSeconds
        }

        /// A lease a watch started without, at `now` (another process held the write lock):
        /// ``keep(now:renew:)`` takes it at its next call, and it counts as lapsed, so that the
        /// first reading under it reports every key.
        package static func untaken(at now: Int64) -> Lease {
            var lease = Lease(takenAt: now)
            lease.end = now - 1
            lease.lapsed = true
            lease.isUntaken = true
            return lease
        }

        /// Whether the lease was never taken (``untaken(at:)``, and not renewed since).
        package private(set) var isUntaken = false

        /// Calls `attempt` 100 ms from now, then again after twice the wait (at most 1 s) for
        /// as long as it returns true: how a watch that started without its lease (another process
        /// held the write lock) keeps trying to take it. `attempt` reads the log, which takes the
        /// lease when it can, and returns whether the lease is still untaken and the watch on.
        package static func retryUntilTaken(_ attempt: @escaping @Sendable () -> Bool) {
            retry(after: .milliseconds(100), attempt)
        }

        private static func retry(after delay: Duration, _ attempt: @escaping @Sendable () -> Bool) {
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanosecondsInt)) {
                if attempt() { retry(after: min(delay * 2, .seconds(1)), attempt) }
            }
        }

        /// Renews the lease through `renew` (given the new end) once a quarter of it has passed,
        /// and notes whether it had lapsed. Writers compare leases with whole seconds of their own
        /// clock, so a lease within a second of its end counts as lapsed.
        package mutating func keep(now: Int64 = ChangeLog.now, renew: (Int64) throws(DefaultsError) -> Void) throws(DefaultsError) {
            guard now >= end - leaseSeconds * 3 / 4 else { return }
            let hadLapsed = now + 1 >= end
            try renew(now + leaseSeconds)
            end = now + leaseSeconds
            isUntaken = false
            if hadLapsed { lapsed = true }
        }
    }

    /// What wakes a watcher: a ``FileChangeMonitor`` on the store's files, woken by the doorbell
    /// that follows every commit that logged entries and by the files being replaced (inotify on
    /// Linux, which then ignores the writes themselves, so that commits that logged nothing, this
    /// process's own among them, wake no one; a `stat` poll elsewhere, or where inotify is
    /// refused), and a timer every quarter of the lease, for renewing it (and reading the log, in
    /// case a writer died between its commit and its doorbell). Nothing runs while nothing is
    /// written, but the timer.
    ///
    /// The changes of a burst of commits are gathered for ``settleDelay`` into one call, so that
    /// a process writing quickly does not pay for a reading of the log per commit.
    package final class Watch: Sendable {
        /// How long changes are gathered before `onChange` runs.
        package static let settleDelay = DispatchTimeInterval.milliseconds(1)

        private let monitor: FileChangeMonitor
        private let timer: Mutex<(any DispatchSourceTimer)?>

        /// Starts watching `files` (their directories must exist): `onChange` after each burst of
        /// changes, `onTimer` every quarter of the lease, both on one private serial queue.
        package init(
            files: [String], backend: String, onChange: @escaping @Sendable () -> Void,
            onTimer: @escaping @Sendable () -> Void
        ) throws(DefaultsError) {
            let queue = DispatchQueue(label: "AnyDefaults.ChangeLog.Watch")
            let pending = Pending()
            let gathered: @Sendable () -> Void = {
                guard !pending.scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
                queue.asyncAfter(deadline: .now() + Self.settleDelay) {
                    // Cleared first: a change from here on schedules another call.
                    pending.scheduled.store(false, ordering: .releasing)
                    onChange()
                }
            }
            do {
                monitor = try FileChangeMonitor(watching: files, trigger: .touchOrReplacement, backend: backend, onChange: gathered)
            } catch {
                // Out of inotify watches, for example: a `stat` poll still notices every commit.
                monitor = try FileChangeMonitor(
                    watching: files, strategy: .polling(interval: .milliseconds(100)), backend: backend, onChange: gathered)
            }
            let period = DispatchTimeInterval.seconds(Int(leaseSeconds / 4))
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + period, repeating: period, leeway: .seconds(5))
            timer.setEventHandler(handler: onTimer)
            timer.resume()
            self.timer = Mutex(timer)
        }

        /// Stops both. A call already queued may still arrive. Calling it again does nothing.
        package func cancel() {
            let current = timer.withLock { timer in
                defer { timer = nil }
                return timer
            }
            current?.cancel()
            monitor.cancel()
        }

        deinit { cancel() }

        /// Whether a call of `onChange` is scheduled.
        private final class Pending: Sendable {
            let scheduled = Atomic<Bool>(false)
        }
    }
}
