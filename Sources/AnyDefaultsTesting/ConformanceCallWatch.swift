import AnyDefaultsCore
import Foundation
import Synchronization

/// The calls into the provider under test that have not returned yet, so that a group whose
/// provider hangs (a deadlock, a wait without end) fails instead of hanging the suite.
///
/// Every provider a group opens is wrapped in a ``ConformanceWatchedProvider``, which notes each
/// call here; the thread that runs the group looks at the oldest call still open while it waits.
/// Calls are noted in slots with relaxed atomics only: a lock would order the threads of the
/// concurrency checks, whose calls must overlap, and would tell ThreadSanitizer that calls on
/// different threads are ordered, hiding the races it is run to find.
final class ConformanceCallWatch: Sendable {
    /// What a watched call is.
    enum Call: Int, Sendable, CaseIterable, CustomStringConvertible {
        case open, capabilitiesProbe, cleanup, release
        case capabilities, storeIdentity, sharedChangeCounter
        case value, setValue, removeValue, removeValueIfPresent, keys, allValues, keysWithPrefix, allValuesWithPrefix
        case apply, removeAll, removeValuesIfUnchanged, applyIfUnchanged, synchronize, makeDurable
        case observe, cancelObservation, releaseObservation
        case setValueAsync, removeValueAsync, applyAsync, removeAllAsync, asyncTask

        var description: String {
            switch self {
            case .open: "opening the provider (the suite's open closure)"
            case .capabilitiesProbe: "opening a provider to learn its capabilities (the suite's open closure)"
            case .cleanup: "cleaning up the storage (the suite's cleanup closure)"
            case .release: "releasing the last reference to the provider (its deinit)"
            case .capabilities: "capabilities"
            case .storeIdentity: "storeIdentity"
            case .sharedChangeCounter: "sharedChangeCounter"
            case .value: "value(forKey:)"
            case .setValue: "setValue(_:forKey:)"
            case .removeValue: "removeValue(forKey:)"
            case .removeValueIfPresent: "removeValueIfPresent(forKey:)"
            case .keys: "keys()"
            case .allValues: "allValues()"
            case .keysWithPrefix: "keys(withPrefix:)"
            case .allValuesWithPrefix: "allValues(withPrefix:)"
            case .apply: "apply(_:)"
            case .removeAll: "removeAll()"
            case .removeValuesIfUnchanged: "removeValues(ifUnchanged:)"
            case .applyIfUnchanged: "apply(_:ifUnchanged:)"
            case .synchronize: "synchronize()"
            case .makeDurable: "makeDurable()"
            case .observe: "observe(_:)"
            case .cancelObservation: "cancelling an observation"
            case .releaseObservation: "releasing an observation"
            case .setValueAsync: "setValueAsync(_:forKey:)"
            case .removeValueAsync: "removeValueAsync(forKey:)"
            case .applyAsync: "applyAsync(_:)"
            case .removeAllAsync: "removeAllAsync()"
            case .asyncTask: "an async call's task (started, run and ended)"
            }
        }
    }

    /// A call open longer than allowed.
    struct Overdue: Sendable {
        let call: Call
        let seconds: Double
    }

    private final class Slot: Sendable {
        /// When the call began, in nanoseconds since the watch's origin plus one; 0 when free.
        let started = Atomic<Int>(0)
        let call = Atomic<Int>(0)
    }

    private let origin = ContinuousClock.now
    private let slots = (0..<512).map { _ in Slot() }
    /// Where the next call starts looking for a free slot: a hint, so that threads rarely meet.
    private let cursor = Atomic(0)
    private let closed = Atomic(false)

    /// Notes that `call` began; pass what it returns to ``end(_:)`` once it returns. Once the
    /// watch is closed (its group was given up), the calling thread stops here for good: the
    /// group must not go on beside the groups after it.
    func begin(_ call: Call) -> Int {
        while closed.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 3600) }
        let now = (ContinuousClock.now - origin).clampedNanosecondsInt &+ 1
        let start = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        for offset in 0..<slots.count {
            let index = (start &+ offset) & (slots.count - 1)
            if slots[index].started.compareExchange(expected: 0, desired: now, ordering: .relaxed).exchanged {
                slots[index].call.store(call.rawValue, ordering: .relaxed)
                return index
            }
        }
        return -1  // more calls at once than slots: this one goes unwatched
    }

    /// Notes that the call `id` returned (or threw).
    func end(_ id: Int) {
        guard id >= 0 else { return }
        slots[id].started.store(0, ordering: .relaxed)
    }

    /// The call that has been open the longest, if it has been open longer than `limit`. An
    /// async call's task is named by the provider's call inside it, when there is one.
    func overdue(after limit: Duration) -> Overdue? {
        let now = (ContinuousClock.now - origin).clampedNanosecondsInt &+ 1
        let open = slots.compactMap { slot -> (started: Int, call: Call)? in
            let started = slot.started.load(ordering: .relaxed)
            guard started != 0 else { return nil }
            return (started, Call(rawValue: slot.call.load(ordering: .relaxed)) ?? .open)
        }.sorted { $0.started < $1.started }
        guard let oldest = open.first, now - oldest.started > limit.clampedNanosecondsInt else { return nil }
        let named = oldest.call == .asyncTask ? open.dropFirst().first { $0.call != .asyncTask } ?? oldest : oldest
        return Overdue(call: named.call, seconds: Double(now - oldest.started) / 1e9)
    }

    /// Stops every thread that calls ``begin(_:)`` from now on.
    func close() {
        closed.store(true, ordering: .relaxed)
    }

    /// Runs `body` as `call`.
    func track<Result, Failure: Error>(_ call: Call, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let id = begin(call)
        defer { end(id) }
        return try body()
    }
}
