import AnyDefaultsCore
import Foundation

extension DefaultsConformanceSuite {
    /// External changes (for providers that claim ``DefaultsCapabilities/externalChanges``): an
    /// observed instance reports what a second instance in this process (with
    /// ``DefaultsCapabilities/persistent``) and another process (with a ``ChildProcess``) change —
    /// new keys, overwrites, removals, batches, `removeAll()` — each once, with its new value and
    /// origin `.external`, and nothing for keys they write without changing; also when it reads the
    /// changed keys before its watcher noticed them, and to every observer (one cancelled part-way
    /// receives nothing after). Its own writes are reported once, as `.local`.
    func externalChangeChecks() throws -> ConformanceReport {
        try group(.externalChanges) { checker, storage, provider in
            let recorder = EventRecorder()
            let observation = provider.observe { recorder.record($0) }
            defer { observation.cancel() }
            // More observers, each to receive every external change: one for the whole group, one
            // cancelled part-way (after which it receives nothing).
            let others = [EventRecorder(), EventRecorder()]
            let otherObservations = others.map { other in provider.observe { other.record($0) } }
            defer { for observation in otherObservations { observation.cancel() } }
            var cancelled = false
            var sources: [(name: String, prefix: String, apply: ([DefaultsChange]) throws -> Void, removeAll: () throws -> Void, finish: () -> Void)] = []
            var second: (any DefaultsProvider)?
            if capabilities.contains(.persistent) {
                second = reopen(storage, checker, "open a second instance")
                if let second {
                    sources.append(("a second instance", "xi.", { try second.apply($0) }, { try second.removeAll() }, {}))
                }
            }
            if let child, ChildConnection.isSupported, let connection = startChild(child, storage, checker) {
                sources.append((
                    "another process", "xp.", { _ = try connection.request("apply", ChildWire.batch($0)) }, { _ = try connection.request("removeAll") },
                    { try? connection.quit() }))
            }
            var stored: [String: DefaultsValue] = [:]
            for source in sources {
                defer { source.finish() }
                var marker = 0
                /// Makes `changes` elsewhere, then a marker write, and expects exactly `expected` and the marker.
                func step(_ detail: String, _ changes: [DefaultsChange]?, expect expected: [(String, DefaultsValue?)]) -> Bool {
                    recorder.clear()
                    for other in others { other.clear() }
                    marker += 1
                    let markerKey = "\(source.prefix)marker.\(marker)"
                    do {
                        if let changes { try source.apply(changes) } else { try source.removeAll() }
                        // Reads that may reload the store before the watcher does: what they adopt
                        // is still reported.
                        for change in changes ?? [] { _ = try? provider.value(forKey: change.key) }
                        _ = try? provider.keys()
                        try? provider.synchronize()
                        try source.apply([.set(markerKey, .int(Int64(marker)))])
                    } catch {
                        checker.fail(.externalChangesReported, "\(source.name): \(detail)", expected: "the change is made", actual: "\(error)")
                        return false
                    }
                    for change in changes ?? stored.keys.map({ .remove($0) }) { stored[change.key] = change.value }
                    stored[markerKey] = .int(Int64(marker))
                    let all = expected + [(markerKey, .int(Int64(marker)))]
                    let deadline = Date().addingTimeInterval(timeoutForEvents.seconds)
                    var events = recorder.wait(for: 0, timeout: 0)
                    while !events.contains(where: { $0.key == markerKey }), Date() < deadline {
                        usleep(2_000)
                        events = recorder.wait(for: 0, timeout: 0)
                    }
                    // A little longer, for reports that should not come.
                    events = recorder.wait(for: all.count + 1, timeout: 0.1)
                    let reported = events.map { ($0.key, $0.newValue) }
                    let missing = all.filter { item in !reported.contains { $0.0 == item.0 && ConformanceExactness.equal($0.1, item.1) } }
                    let extra = reported.filter { item in !all.contains { $0.0 == item.0 && ConformanceExactness.equal($0.1, item.1) } }
                    checker.check(
                        .externalChangesReported, missing.isEmpty, "\(source.name): \(detail): every change is reported",
                        expected: EventRecorder.describe(all), actual: EventRecorder.describe(reported))
                    checker.check(
                        .externalChangesUnchangedSilent, extra.isEmpty && reported.count <= all.count,
                        "\(source.name): \(detail): nothing for unchanged keys, each change once",
                        expected: EventRecorder.describe(all), actual: EventRecorder.describe(reported))
                    // The other observers had as long as the first; a receiving one gets a little more
                    // only while its events are missing.
                    for (index, other) in others.enumerated() {
                        let receiving = index == 0 || !cancelled
                        func missing(_ reported: [(String, DefaultsValue?)]) -> [(String, DefaultsValue?)] {
                            all.filter { item in !reported.contains { $0.0 == item.0 && ConformanceExactness.equal($0.1, item.1) } }
                        }
                        let otherDeadline = Date().addingTimeInterval(receiving ? 1 : 0)
                        var otherReported = other.events.map { ($0.key, $0.newValue) }
                        while !missing(otherReported).isEmpty, Date() < otherDeadline {
                            usleep(2_000)
                            otherReported = other.events.map { ($0.key, $0.newValue) }
                        }
                        let otherMissing = missing(otherReported)
                        checker.check(
                            .externalChangesObservers, receiving ? otherMissing.isEmpty : otherReported.isEmpty,
                            "\(source.name): \(detail): \(receiving ? "another observer receives every change" : "a cancelled observer receives nothing")",
                            expected: receiving ? EventRecorder.describe(all) : "no event", actual: EventRecorder.describe(otherReported))
                    }
                    if let local = events.first(where: { $0.origin != .external }) {
                        checker.fail(.externalChangesOrigin, "\(source.name): \(detail)", key: local.key, expected: "origin .external", actual: "origin \(local.origin)")
                    }
                    return true
                }
                let p = source.prefix
                guard step("write a new key", [.set("\(p)a", .int(1))], expect: [("\(p)a", .int(1))]) else { continue }
                _ = step("write the value already stored", [.set("\(p)a", .int(1))], expect: [])
                _ = step(
                    "apply a batch of changed and unchanged values",
                    [.set("\(p)a", .int(1)), .set("\(p)b", .string("b")), .set("\(p)c", .array([.double(-0.0)])), .remove("\(p)absent")],
                    expect: [("\(p)b", .string("b")), ("\(p)c", .array([.double(-0.0)]))])
                _ = step("overwrite a key", [.set("\(p)b", .string("B"))], expect: [("\(p)b", .string("B"))])
                if !cancelled {
                    otherObservations[1].cancel()
                    cancelled = true
                }
                _ = step("remove a key", [.remove("\(p)c")], expect: [("\(p)c", nil)])
                _ = step("remove an absent key", [.remove("\(p)c")], expect: [])

                // This instance's own write: reported once, as local.
                recorder.clear()
                checker.attempt(.externalChangesUnchangedSilent, "write through the observed instance", key: "\(p)own") { try provider.setValue(.int(5), forKey: "\(p)own") }
                stored["\(p)own"] = .int(5)
                let own = recorder.wait(for: 1)
                usleep(100_000)
                let ownEvents = recorder.wait(for: 0, timeout: 0)
                checker.check(
                    .externalChangesUnchangedSilent, ownEvents.count == 1 && own.first?.origin == .local,
                    "\(source.name): the observed instance's own write is reported once, as local", key: "\(p)own",
                    expected: "one local event", actual: ownEvents.map { "\($0.key) (\($0.origin))" }.description)

                let removals = stored.keys.map { ($0, DefaultsValue?.none) }
                _ = step("removeAll()", nil, expect: removals)
            }
        }
    }
}
