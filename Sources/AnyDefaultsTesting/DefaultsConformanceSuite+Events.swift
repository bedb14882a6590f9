import AnyDefaultsCore
import Foundation
import Synchronization

extension DefaultsConformanceSuite {
    /// Change events: one event per real change, in order, with the new value (or `nil` for a
    /// removal); none for writing the value already stored, removing an absent key, an empty
    /// batch or `removeAll()` on an empty store; none after the observation is cancelled. With
    /// ``DefaultsCapabilities/externalChanges`` and ``DefaultsCapabilities/persistent``, a second
    /// instance on the same storage also reports the first one's writes.
    @discardableResult
    public func changeEvents() throws -> ConformanceReport {
        try group("changeEvents") { checker, storage, provider in
            let recorder = EventRecorder()
            let observation = provider.observe { recorder.record($0) }

            func expectEvents(_ step: String, _ expected: [(String, DefaultsValue?)], _ action: () throws -> Void) {
                recorder.clear()
                checker.attempt(step) { try action() }
                let events = recorder.wait(for: expected.count)
                let actual = events.map { ($0.key, $0.newValue) }
                let matches = actual.count == expected.count && zip(actual, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
                checker.check(
                    matches, "\(step): \(expected.isEmpty ? "no event" : "\(expected.count) event(s) in order")",
                    expected: expected.map { "\($0.0)=\(describe($0.1))" }.description,
                    actual: actual.map { "\($0.0)=\(describe($0.1))" }.description)
                if matches, let origin = events.first(where: { $0.origin != .local })?.origin {
                    checker.fail("\(step): events of this instance's own writes", expected: "origin .local", actual: "origin \(origin)")
                }
            }

            expectEvents("write a new key", [("e.a", .int(1))]) { try provider.setValue(.int(1), forKey: "e.a") }
            expectEvents("write the value already stored", []) { try provider.setValue(.int(1), forKey: "e.a") }
            expectEvents("write a new value", [("e.a", .int(2))]) { try provider.setValue(.int(2), forKey: "e.a") }
            expectEvents("write the same number as another type", [("e.a", .double(2))]) { try provider.setValue(.double(2), forKey: "e.a") }
            expectEvents("write -0.0 over 0.0", [("e.z", .double(0)), ("e.z", .double(-0.0))]) {
                try provider.setValue(.double(0), forKey: "e.z")
                try provider.setValue(.double(-0.0), forKey: "e.z")
            }
            expectEvents("write NaN over NaN", [("e.n", .double(.nan))]) {
                try provider.setValue(.double(.nan), forKey: "e.n")
                try provider.setValue(.double(.nan), forKey: "e.n")
            }
            expectEvents("remove a present key", [("e.a", nil)]) { try provider.removeValue(forKey: "e.a") }
            expectEvents("remove an absent key", []) { try provider.removeValue(forKey: "e.a") }
            expectEvents("apply a batch", [("e.b", .int(1)), ("e.c", .string("c"))]) {
                try provider.apply([.set("e.b", .int(1)), .remove("e.absent"), .set("e.c", .string("c"))])
            }
            expectEvents("apply a batch of unchanged values", []) { try provider.apply([.set("e.b", .int(1)), .set("e.c", .string("c"))]) }
            expectEvents("apply an empty batch", []) { try provider.apply([]) }
            expectEvents("apply a rejected batch", []) { try? provider.apply([.set("e.d", .int(1)), .set("", .int(1))]) }

            recorder.clear()
            checker.attempt("removeAll()") { try provider.removeAll() }
            let removals = recorder.wait(for: 4)
            let removedKeys = Set(removals.map(\.key))
            checker.check(
                removals.count == 4 && removedKeys == ["e.z", "e.n", "e.b", "e.c"] && removals.allSatisfy { $0.newValue == nil },
                "removeAll(): one removal event per stored key",
                expected: "removals of e.z, e.n, e.b, e.c", actual: removals.map { "\($0.key)=\(describe($0.newValue))" }.description)
            expectEvents("removeAll() on an empty store", []) { try provider.removeAll() }

            observation.cancel()
            expectEvents("write after cancel()", []) { try provider.setValue(.int(9), forKey: "e.after") }

            if capabilities.isSuperset(of: [.persistent, .externalChanges]) {
                guard let second = reopen(storage, checker, "open a second instance") else { return }
                let external = EventRecorder()
                let secondObservation = second.observe { external.record($0) }
                checker.attempt("write through the first instance", key: "e.x") { try provider.setValue(.string("x"), forKey: "e.x") }
                let events = external.wait(for: 1, timeout: 5)
                checker.check(
                    events.contains { $0.key == "e.x" && $0.newValue == .string("x") }, "a second instance reports the first one's write",
                    key: "e.x", expected: "an event for e.x", actual: events.map { "\($0.key)=\(describe($0.newValue))" }.description)
                secondObservation.cancel()
            }
        }
    }
}

/// Collects events from any thread and waits for a number of them.
final class EventRecorder: Sendable {
    private let events = Mutex<[DefaultsChangeEvent]>([])

    func record(_ event: DefaultsChangeEvent) { events.withLock { $0.append(event) } }

    func clear() { events.withLock { $0.removeAll() } }

    /// Waits until `count` events arrived (at most `timeout` seconds), then a little longer to
    /// catch events that should not come, and returns what arrived.
    func wait(for count: Int, timeout: Double = 1) -> [DefaultsChangeEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        while events.withLock({ $0.count }) < count, Date() < deadline {
            usleep(1_000)
        }
        usleep(count == 0 ? 50_000 : 20_000)
        return events.withLock { $0 }
    }
}
