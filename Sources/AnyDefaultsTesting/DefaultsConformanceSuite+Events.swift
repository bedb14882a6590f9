import AnyDefaultsCore
import Foundation
import Synchronization

extension DefaultsConformanceSuite {
    /// Change events: one event per real change, in order, with the exact new value (or `nil`
    /// for a removal) and origin `.local`; none for writing the value already stored, removing an
    /// absent key, an empty or unchanged batch or `removeAll()` on an empty store; batch events in
    /// the batch's order; several observers each see every event, cancelling or releasing one
    /// stops only it; handlers run outside the provider's locks (another thread can use the
    /// provider meanwhile, and a handler can read, write and cancel — every such step under a
    /// timeout, so a provider that deadlocks fails instead of hanging the suite); concurrent
    /// writers' events arrive in commit order.
    func changeEventChecks() throws -> ConformanceReport {
        try group(.changeEvents) { checker, _, provider in
            let recorder = EventRecorder()
            let observation = provider.observe { recorder.record($0) }

            func expectEvents(_ id: ConformanceCheck, _ step: String, _ expected: [(String, DefaultsValue?)], _ action: () throws -> Void) {
                recorder.clear()
                checker.attempt(id, step) { try action() }
                let events = recorder.wait(for: expected.count)
                let matches = events.count == expected.count
                    && zip(events, expected).allSatisfy { $0.key == $1.0 && ConformanceExactness.equal($0.newValue, $1.1) }
                checker.check(
                    id, matches, "\(step): \(expected.isEmpty ? "no event" : "\(expected.count) event(s) in order")",
                    expected: EventRecorder.describe(expected), actual: EventRecorder.describe(events.map { ($0.key, $0.newValue) }))
                if let other = events.first(where: { $0.origin != .local }) {
                    checker.fail(.changeEventsOrigin, "\(step): events of this instance's own writes", key: other.key, expected: "origin .local", actual: "origin \(other.origin)")
                }
            }

            expectEvents(.changeEventsChange, "write a new key", [("e.a", .int(1))]) { try provider.setValue(.int(1), forKey: "e.a") }
            expectEvents(.changeEventsNoOp, "write the value already stored", []) { try provider.setValue(.int(1), forKey: "e.a") }
            expectEvents(.changeEventsChange, "write a new value", [("e.a", .int(2))]) { try provider.setValue(.int(2), forKey: "e.a") }
            expectEvents(.changeEventsChange, "write the same number as another type", [("e.a", .double(2))]) { try provider.setValue(.double(2), forKey: "e.a") }
            expectEvents(.changeEventsChange, "write -0.0 over 0.0", [("e.z", .double(0)), ("e.z", .double(-0.0))]) {
                try provider.setValue(.double(0), forKey: "e.z")
                try provider.setValue(.double(-0.0), forKey: "e.z")
            }
            expectEvents(.changeEventsNoOp, "write NaN over NaN", [("e.n", .double(.nan))]) {
                try provider.setValue(.double(.nan), forKey: "e.n")
                try provider.setValue(.double(.nan), forKey: "e.n")
            }
            expectEvents(.changeEventsChange, "write an NFD string, then the NFC one", [("e.s", .string("cafe\u{301}")), ("e.s", .string("caf\u{E9}"))]) {
                try provider.setValue(.string("cafe\u{301}"), forKey: "e.s")
                try provider.setValue(.string("caf\u{E9}"), forKey: "e.s")
            }
            // Containers equal under String's == but with other scalars: each write is a change.
            for (key, nfd, nfc) in [
                ("e.sa", DefaultsValue.array([.string("cafe\u{301}")]), DefaultsValue.array([.string("caf\u{E9}")])),
                ("e.sd", .dictionary(["cafe\u{301}": .int(1)]), .dictionary(["caf\u{E9}": .int(1)])),
            ] {
                expectEvents(.changeEventsChange, "write \(nfd.typeName) spelled NFD, then NFC", [(key, nfd), (key, nfc)]) {
                    try provider.setValue(nfd, forKey: key)
                    try provider.setValue(nfc, forKey: key)
                }
                let read = checker.attempt(.changeEventsChange, "read the NFC spelling written last", key: key) { try provider.value(forKey: key) }
                checker.expectValue(.changeEventsChange, read ?? nil, nfc, "a container written NFD, then NFC, reads back NFC", key: key)
            }
            expectEvents(.changeEventsChange, "remove a present key", [("e.a", nil)]) { try provider.removeValue(forKey: "e.a") }
            expectEvents(.changeEventsNoOp, "remove an absent key", []) { try provider.removeValue(forKey: "e.a") }
            expectEvents(.changeEventsBatchOrder, "apply a batch", [("e.y", .int(1)), ("e.b", .string("b")), ("e.m", .array([.double(-0.0)]))]) {
                try provider.apply([.set("e.y", .int(1)), .remove("e.absent"), .set("e.b", .string("b")), .set("e.m", .array([.double(-0.0)]))])
            }
            expectEvents(.changeEventsNoOp, "apply a batch of unchanged values", []) {
                try provider.apply([.set("e.y", .int(1)), .set("e.b", .string("b")), .set("e.m", .array([.double(-0.0)])), .remove("e.absent")])
            }
            expectEvents(.changeEventsBatchOrder, "apply a batch of changed and unchanged values", [("e.m", .array([.double(0.0)])), ("e.q", .int(7))]) {
                try provider.apply([.set("e.y", .int(1)), .set("e.m", .array([.double(0.0)])), .set("e.b", .string("b")), .set("e.q", .int(7))])
            }
            expectEvents(.changeEventsNoOp, "apply an empty batch", []) { try provider.apply([]) }
            expectEvents(.changeEventsNoOp, "apply a rejected batch", []) { try? provider.apply([.set("e.d", .int(1)), .set("", .int(1))]) }

            // The conditional writes report what they change, and nothing when they change nothing.
            let conditional = ConformanceCheck.changeEventsConditional
            expectEvents(conditional, "apply(_:ifUnchanged:) that applies", [("e.c", .int(1))]) {
                _ = try provider.apply([.set("e.c", .int(1)), .remove("e.absent")], ifUnchanged: ["e.c": nil])
            }
            expectEvents(conditional, "apply(_:ifUnchanged:) whose condition fails", []) {
                _ = try provider.apply([.set("e.c", .int(2))], ifUnchanged: ["e.c": .int(5)])
            }
            expectEvents(conditional, "removeValueIfPresent of a present key", [("e.c", nil)]) { _ = try provider.removeValueIfPresent(forKey: "e.c") }
            expectEvents(conditional, "removeValueIfPresent of an absent key", []) { _ = try provider.removeValueIfPresent(forKey: "e.c") }
            expectEvents(conditional, "apply(_:ifUnchanged:) of two keys", [("e.c", .int(3)), ("e.c2", .int(4))]) {
                _ = try provider.apply([.set("e.c", .int(3)), .set("e.c2", .int(4))], ifUnchanged: [:])
            }
            expectEvents(conditional, "removeValues(ifUnchanged:) of one unchanged and one changed key", [("e.c", nil)]) {
                _ = try provider.removeValues(ifUnchanged: ["e.c": .int(3), "e.c2": .int(5)])
            }
            expectEvents(conditional, "removeValueIfPresent to clean up", [("e.c2", nil)]) { _ = try provider.removeValueIfPresent(forKey: "e.c2") }

            // The async writes report as the synchronous ones do (not only through the default
            // implementations, which run them).
            let async = ConformanceCheck.changeEventsAsync
            expectEvents(async, "setValueAsync", [("e.as", .int(1))]) {
                try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.setValueAsync(.int(1), forKey: "e.as") }
            }
            expectEvents(async, "applyAsync", [("e.as", .int(2)), ("e.as2", .int(3))]) {
                try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.applyAsync([.set("e.as", .int(2)), .remove("e.absent"), .set("e.as2", .int(3))]) }
            }
            expectEvents(async, "removeValueAsync", [("e.as", nil)]) {
                try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.removeValueAsync(forKey: "e.as") }
            }

            recorder.clear()
            checker.attempt(.changeEventsRemoveAll, "removeAll()") { try provider.removeAll() }
            let stored = ["e.z", "e.n", "e.s", "e.sa", "e.sd", "e.y", "e.b", "e.m", "e.q", "e.as2"]
            let removals = recorder.wait(for: stored.count)
            checker.check(
                .changeEventsRemoveAll, removals.count == stored.count && Set(removals.map(\.key)) == Set(stored) && removals.allSatisfy { $0.newValue == nil },
                "removeAll(): one removal event per stored key",
                expected: "removals of \(stored.joined(separator: ", "))", actual: EventRecorder.describe(removals.map { ($0.key, $0.newValue) }))
            expectEvents(.changeEventsRemoveAll, "removeAll() on an empty store", []) { try provider.removeAll() }

            expectEvents(.changeEventsChange, "write a key to remove with removeAllAsync", [("e.ra", .int(1))]) { try provider.setValue(.int(1), forKey: "e.ra") }
            expectEvents(async, "removeAllAsync", [("e.ra", nil)]) { try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.removeAllAsync() } }

            // A large batch, and removeAll() of as many keys: every event (no limit per commit).
            let large = (0..<1_001).map { (key: "e.l.\($0)", value: DefaultsValue.int(Int64($0))) }
            expectEvents(.changeEventsBatchOrder, "apply a batch of 1 001 new keys", large.map { ($0.key, $0.value) }) {
                try provider.apply(large.map { .set($0.key, $0.value) })
            }
            recorder.clear()
            checker.attempt(.changeEventsRemoveAll, "removeAll() of 1 001 keys") { try provider.removeAll() }
            let largeRemovals = recorder.wait(for: large.count)
            checker.check(
                .changeEventsRemoveAll, largeRemovals.count == large.count && Set(largeRemovals.map(\.key)) == Set(large.map(\.key))
                    && largeRemovals.allSatisfy { $0.newValue == nil },
                "removeAll() of 1 001 keys: one removal event per stored key",
                expected: "\(large.count) removals", actual: "\(largeRemovals.count) events: " + EventRecorder.describe(largeRemovals.map { ($0.key, $0.newValue) }))

            observerChecks(checker, provider, recorder)
            observation.cancel()
            expectEvents(.changeEventsCancel, "write after cancel()", []) { try provider.setValue(.int(9), forKey: "e.after") }

            guard !checker.isAbandoned else { return }
            if lockChecks(checker, provider), !checker.isAbandoned {
                reentrantChecks(checker, provider)
            }
            guard !checker.isAbandoned else { return }
            concurrentOrderCheck(checker, provider)
        }
    }

    /// Several observers at once; cancelling one, or releasing one, stops only that one.
    private func observerChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider, _ main: EventRecorder) {
        let recorders = (0..<3).map { _ in EventRecorder() }
        var observations = recorders.map { recorder in provider.observe { recorder.record($0) } }
        func expectEach(_ id: ConformanceCheck, _ step: String, _ receiving: [Bool], key: String, value: Int64) {
            for recorder in recorders + [main] { recorder.clear() }
            checker.attempt(id, step, key: key) { try provider.setValue(.int(value), forKey: key) }
            _ = main.wait(for: 1)
            for (index, recorder) in recorders.enumerated() {
                let events = recorder.wait(for: receiving[index] ? 1 : 0, timeout: receiving[index] ? 1 : 0)
                let expected: [(String, DefaultsValue?)] = receiving[index] ? [(key, .int(value))] : []
                let matches = events.count == expected.count && zip(events, expected).allSatisfy { $0.key == $1.0 && $0.newValue == $1.1 }
                checker.check(
                    id, matches, "\(step): observer \(index + 1) \(receiving[index] ? "receives the event" : "receives nothing")",
                    expected: EventRecorder.describe(expected), actual: EventRecorder.describe(events.map { ($0.key, $0.newValue) }))
            }
        }
        expectEach(.changeEventsObservers, "write with four observers", [true, true, true], key: "o.a", value: 1)
        observations[1].cancel()
        expectEach(.changeEventsCancelOne, "write after cancelling the second observer", [true, false, true], key: "o.a", value: 2)
        // Released, not cancelled: the observation's last reference goes away.
        observations[2] = DefaultsObservation {}
        expectEach(.changeEventsReleased, "write after releasing the third observer", [true, false, false], key: "o.a", value: 3)
        observations[0].cancel()
        expectEach(.changeEventsCancelOne, "write after cancelling the first observer", [false, false, false], key: "o.a", value: 4)
        checker.attempt(.changeEventsObservers, "remove") { try provider.removeValue(forKey: "o.a") }
    }

    /// While a handler runs, another thread reads and writes the provider: with the provider's
    /// locks released, it finishes at once. Returns whether it did (the re-entrant checks, which
    /// would deadlock a provider that holds its lock, run only then).
    private func lockChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) -> Bool {
        let outcome = Mutex<Bool?>(nil)
        let observation = provider.observe { event in
            guard event.key == "l.trigger" else { return }
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? provider.value(forKey: "l.other")
                try? provider.setValue(.int(1), forKey: "l.other")
                _ = try? provider.keys()
                done.signal()
            }
            let finished = done.wait(timeout: .now() + 2) == .success
            outcome.withLock { if $0 == nil { $0 = finished } }
        }
        defer { observation.cancel() }
        guard checker.withTimeout(.changeEventsOutsideLock, "a write whose handler uses the provider from another thread", key: "l.trigger", {
            try? provider.setValue(.int(1), forKey: "l.trigger")
        }) else { return false }
        let deadline = ContinuousClock.now + timeoutForEvents
        while outcome.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(1_000) }
        let finished = outcome.withLock { $0 }
        checker.check(
            .changeEventsOutsideLock, finished == true, "another thread can read and write while a handler runs", key: "l.trigger",
            expected: "the other thread finishes while the handler waits",
            actual: finished == nil ? "the handler never ran" : "it waited more than 2 s: the provider holds a lock while it calls handlers")
        return finished == true
    }

    /// A handler reads the key it was told about (and sees the committed value), writes another
    /// key, and cancels its own observation, all from inside the handler.
    private func reentrantChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let readInside = Mutex<DefaultsValue??>(nil)
        let selfCancelling = Mutex<DefaultsObservation?>(nil)
        let cancelledSaw = EventRecorder()
        let recorder = EventRecorder()
        let observation = provider.observe { event in
            recorder.record(event)
            guard event.key == "re.a" else { return }
            let read = try? provider.value(forKey: "re.a")
            readInside.withLock { $0 = .some(read) }
            try? provider.setValue(.string("written inside"), forKey: "re.b")
        }
        defer { observation.cancel() }
        let cancelling = provider.observe { event in
            cancelledSaw.record(event)
            if event.key == "re.b" { selfCancelling.withLock { $0 }?.cancel() }
        }
        selfCancelling.withLock { $0 = cancelling }
        guard checker.withTimeout(.changeEventsReentrant, "a write whose handler reads, writes and cancels", key: "re.a", {
            try? provider.setValue(.int(1), forKey: "re.a")
        }) else { return }
        let events = recorder.wait(for: 2, timeout: timeoutForEvents.seconds)
        checker.check(
            .changeEventsReentrant, events.map(\.key) == ["re.a", "re.b"], "a handler's own write is reported after the event it handles",
            expected: "[re.a, re.b]", actual: EventRecorder.describe(events.map { ($0.key, $0.newValue) }))
        let inside = readInside.withLock { $0 }
        checker.check(
            .changeEventsReentrant, inside == .some(.int(1)), "a handler reads the committed value", key: "re.a",
            expected: ".int(1)", actual: inside.map { ConformanceText.value($0) } ?? "no read")
        let written = checker.attempt(.changeEventsReentrant, "read the handler's write", key: "re.b") { try provider.value(forKey: "re.b") }
        checker.expectValue(.changeEventsReentrant, written ?? nil, .string("written inside"), "a write from inside a handler is stored", key: "re.b")
        guard checker.withTimeout(.changeEventsReentrant, "a write after a handler cancelled itself", key: "re.b", {
            try? provider.setValue(.int(3), forKey: "re.b")
        }) else { return }
        _ = recorder.wait(for: 3, timeout: timeoutForEvents.seconds)
        let seen = cancelledSaw.wait(for: 0, timeout: 0).filter { $0.key == "re.b" }
        checker.check(
            .changeEventsReentrant, seen.count == 1, "a handler that cancels its own observation receives nothing more",
            expected: "one event for re.b", actual: EventRecorder.describe(seen.map { ($0.key, $0.newValue) }))
    }

    /// Threads write one key at once, in rounds; its events arrive one per write, each thread's
    /// in the order it wrote them, and after every round the last event holds the value the key
    /// ended with (a provider whose writers deliver their own events unordered lets an earlier
    /// commit's event arrive last).
    private func concurrentOrderCheck(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let recorder = EventRecorder()
        // The handler holds the first event of each round for 20 ms before it records it: a
        // provider that calls handlers one after another (as it must, for an order to exist)
        // delivers the round's later events after it; one whose writers each deliver their own
        // events lets them overtake it, so the round's first commit is reported last.
        let firstOfRound = Flag()
        // A handler entered while another call of it runs: the provider delivers on several
        // threads at once, and the events of two commits have no order for the observer.
        let inside = Atomic(false)
        let overlapped = Atomic(false)
        let observation = provider.observe { event in
            guard event.key == "co.key" else { return }
            if inside.exchange(true, ordering: .acquiringAndReleasing) { overlapped.store(true, ordering: .relaxed) }
            if firstOfRound.take() { usleep(20_000) }
            recorder.record(event)
            inside.store(false, ordering: .releasing)
        }
        defer { observation.cancel() }
        let threads = max(2, options.stress.threads / 2)
        let rounds = options.stress.rounds
        var lastRound = Array(repeating: -1, count: threads)
        var outOfOrder: String?
        var staleLast: String?
        var seen = 0
        for round in 0..<rounds {
            firstOfRound.set()
            let finished = checker.withTimeout(.changeEventsConcurrentOrder, "concurrent writers of one key", key: "co.key") {
                runOnThreads(threads) { thread in
                    checker.attempt(.changeEventsConcurrentOrder, "write", key: "co.key") {
                        try provider.setValue(.int(Int64(thread * 100_000 + round)), forKey: "co.key")
                    }
                }
            }
            guard finished else { return }
            let events = recorder.wait(for: seen + threads, timeout: timeoutForEvents.seconds)
            let final = checker.attempt(.changeEventsConcurrentOrder, "read the value", key: "co.key") { try provider.value(forKey: "co.key") }
            for event in events.dropFirst(seen) {
                guard case .int(let number)? = event.newValue else {
                    outOfOrder = outOfOrder ?? "an event with \(ConformanceText.value(event.newValue))"
                    continue
                }
                let (thread, written) = (Int(number / 100_000), Int(number % 100_000))
                guard thread < threads else { continue }
                if written <= lastRound[thread] { outOfOrder = outOfOrder ?? "thread \(thread)'s write \(written) reported after its write \(lastRound[thread])" }
                lastRound[thread] = written
            }
            if events.count == seen + threads, events.last?.newValue != final ?? nil {
                staleLast = staleLast ?? "after round \(round + 1) the last event holds \(ConformanceText.value(events.last?.newValue)), the key \(ConformanceText.value(final ?? nil))"
            }
            // Events that did not come within the timeout fail the check below; waiting for them
            // again in every later round would only make a provider without events hang for minutes.
            let complete = events.count >= seen + threads
            seen = events.count
            if !complete { break }
        }
        checker.check(
            .changeEventsConcurrentOrder, seen == threads * rounds, "one event per write of concurrent writers", key: "co.key",
            expected: "\(threads * rounds) events", actual: "\(seen) events")
        checker.check(
            .changeEventsConcurrentOrder, outOfOrder == nil, "each writer's events in the order of its writes", key: "co.key",
            expected: "commit order", actual: outOfOrder ?? "")
        checker.check(
            .changeEventsConcurrentOrder, staleLast == nil, "the last event of each round holds the value the key ended with", key: "co.key",
            expected: "the final value last", actual: staleLast ?? "")
        let delivered = overlapped.load(ordering: .relaxed) ? "a call began while another ran" : ""
        checker.check(
            .changeEventsConcurrentOrder, delivered.isEmpty, "the handler is called one event at a time", key: "co.key",
            expected: "no call while another runs", actual: delivered)
    }

    /// How long the event checks wait for events that should come.
    var timeoutForEvents: Duration { min(options.timeout, .seconds(10)) }
}

/// Collects events from any thread and waits for a number of them.
final class EventRecorder: Sendable {
    private struct State {
        var events: [DefaultsChangeEvent] = []
        /// Whether any event ever arrived (``clear()`` keeps it).
        var received = false
        /// Whether a wait ran out without any event ever having arrived.
        var silent = false
    }

    private let state = Mutex(State())

    func record(_ event: DefaultsChangeEvent) {
        state.withLock {
            $0.events.append(event)
            $0.received = true
        }
    }

    func clear() { state.withLock { $0.events.removeAll() } }

    /// The events that arrived so far, without waiting.
    var events: [DefaultsChangeEvent] { state.withLock { $0.events } }

    /// Waits until `count` events arrived (at most `timeout` seconds), then a little longer to
    /// catch events that should not come, and returns what arrived. Once a wait has run out
    /// without this recorder ever receiving an event, later waits are short: the checks fail
    /// either way, and a provider without events would otherwise keep the group waiting the full
    /// timeout at every step.
    func wait(for count: Int, timeout: Double = 2) -> [DefaultsChangeEvent] {
        let timeout = state.withLock { $0.silent } ? min(timeout, 0.1) : timeout
        let deadline = Date().addingTimeInterval(timeout)
        while state.withLock({ $0.events.count }) < count, Date() < deadline {
            usleep(1_000)
        }
        usleep(count == 0 ? 50_000 : 20_000)
        return state.withLock {
            if $0.events.count < count, !$0.received { $0.silent = true }
            return $0.events
        }
    }

    /// Events for messages.
    static func describe(_ events: [(String, DefaultsValue?)]) -> String {
        "[" + events.prefix(8).map { "\(ConformanceText.key($0.0))=\(ConformanceText.value($0.1))" }.joined(separator: ", ")
            + (events.count > 8 ? ", … \(events.count) in all" : "") + "]"
    }
}

/// A flag threads can set and take, for handlers that must act once.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }

    /// Whether the flag was set; clears it.
    func take() -> Bool { value.exchange(false, ordering: .acquiringAndReleasing) }
}
