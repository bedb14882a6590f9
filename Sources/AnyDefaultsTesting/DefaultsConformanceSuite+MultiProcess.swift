import AnyDefaultsCore
import Foundation
import Synchronization

extension DefaultsConformanceSuite {
    /// Several processes (for providers that claim ``DefaultsCapabilities/multiProcess``, with a
    /// ``ChildProcess``): child processes and this one write distinct keys at once, singly and in
    /// batches, and none is lost — for a new instance, for another process, and for an instance
    /// that was open (and had read those keys as absent) the whole time; that instance also sees
    /// another process's writes of values of the same size, and sees them at once after
    /// ``AnyDefaultsCore/DefaultsProvider/synchronize()``; processes incrementing one counter with
    /// compare-and-set lose no increment, and of processes removing the same keys with
    /// `removeValueIfPresent(forKey:)` exactly one is told each was there. A provider that keeps a private copy
    /// per instance or process, or writes the whole store back from a stale copy, fails here.
    func multiProcessChecks() throws -> ConformanceReport {
        // A child's many writes contend with every other process's, each durable (a whole-file
        // store rewrites and syncs its file per write): on a loaded machine they take far longer
        // than one request. The bound is for a child that never answers, not a speed limit.
        let manyWrites = options.timeout * 3
        return try group(.multiProcess) { checker, storage, provider in
            guard let child else { return }
            let processes = options.stress.processes
            let count = options.stress.rounds * 2
            var connections: [ChildConnection] = []
            for _ in 0..<processes {
                guard let connection = startChild(child, storage, checker) else { return }
                connections.append(connection)
            }
            defer { for connection in connections { try? connection.quit() } }
            // Read some keys before they exist: a cache that remembers the absence must still learn of the writes.
            for index in 0..<processes { _ = try? provider.value(forKey: "mp.\(index).0") }
            _ = try? provider.value(forKey: "mp.same")

            let failures = Mutex<[String]>([])
            let children = connections
            runOnThreads(processes + 1) { index in
                if index == processes {
                    for number in 0..<count {
                        do { try provider.setValue(.int(Int64(number)), forKey: "mp.p.\(number)") } catch {
                            failures.withLock { $0.append("this process: \(error)") }
                        }
                    }
                    return
                }
                do {
                    _ = try children[index].request("burst", ChildWire.text("mp.\(index)."), "\(count)", "5", timeout: manyWrites)
                } catch {
                    failures.withLock { $0.append("process \(index + 1): \(error)") }
                }
            }
            for failure in failures.withLock({ $0 }) {
                checker.fail(.multiProcessNoLostUpdate, "processes write distinct keys at once", expected: "no error", actual: failure)
            }
            var expected: [String: DefaultsValue] = [:]
            for number in 0..<count {
                expected["mp.p.\(number)"] = .int(Int64(number))
                for index in 0..<processes { expected["mp.\(index).\(number)"] = .int(Int64(number)) }
            }

            // A new instance, and a new process, see every write at once.
            if let fresh = reopen(storage, checker, "open a new instance") {
                let all = checker.attempt(.multiProcessNoLostUpdate, "allValues() of a new instance") { try fresh.allValues() }
                let lost = expected.filter { key, value in !ConformanceExactness.equal(all?[key], value) }.map(\.key)
                checker.check(
                    .multiProcessNoLostUpdate, lost.isEmpty, "no update of several processes is lost (a new instance)",
                    expected: "\(expected.count) keys with their values", actual: "\(lost.count) lost: \(ConformanceText.keys(lost))")
            }
            if let reader = startChild(child, storage, checker) {
                do {
                    let keys = try ChildWire.keys(from: reader.payload("keys"))
                    let missing = Set(expected.keys).subtracting(keys)
                    checker.check(
                        .multiProcessNoLostUpdate, missing.isEmpty, "no update of several processes is lost (a new process)",
                        expected: "\(expected.count) keys", actual: "\(missing.count) missing: \(ConformanceText.keys(missing))")
                    try reader.quit()
                } catch {
                    checker.fail(.suiteChildProcess, "list the keys in a new child process", expected: "an answer", actual: "\(error)")
                }
            }

            // The instance open all along, asked to synchronize, sees them at once.
            _ = checker.attempt(.multiProcessSynchronizeSees, "synchronize() after other processes' writes") { try provider.synchronize() }
            let current = checker.attempt(.multiProcessSynchronizeSees, "allValues() after synchronize()") { try provider.allValues() }
            let behind = expected.filter { key, value in !ConformanceExactness.equal(current?[key], value) }.map(\.key)
            checker.check(
                .multiProcessSynchronizeSees, behind.isEmpty, "after synchronize(), an instance open all along reads other processes' writes at once",
                expected: "\(expected.count) keys with their values", actual: "\(behind.count) missing or stale: \(ConformanceText.keys(behind))")

            // Instances open all along — here, and in another process — see them too (after at
            // most the event timeout).
            let lost = awaitValues(provider, expected, within: timeoutForEvents)
            checker.check(
                .multiProcessOpenInstanceSees, lost.isEmpty, "an instance open all along reads other processes' writes",
                expected: "\(expected.count) keys with their values", actual: "\(lost.count) missing or stale: \(ConformanceText.keys(lost))")
            if let other = connections.last {
                let deadline = ContinuousClock.now + timeoutForEvents
                var missing: Set<String> = []
                repeat {
                    missing = Set(expected.keys).subtracting((try? ChildWire.keys(from: other.payload("keys"))) ?? [])
                    if !missing.isEmpty { usleep(20_000) }
                } while !missing.isEmpty && ContinuousClock.now < deadline
                checker.check(
                    .multiProcessOpenInstanceSees, missing.isEmpty, "an instance open all along in another process lists every process's writes",
                    expected: "\(expected.count) keys", actual: "\(missing.count) missing: \(ConformanceText.keys(missing))")
            }

            // Processes and this one remove the same keys with removeValueIfPresent, in the same
            // order: of all of them, exactly one is told each key was there.
            let removable = options.stress.rounds * 2
            checker.attempt(.multiProcessCompareAndSet, "write the keys to remove", key: "mp.rm.") {
                try provider.apply((0..<removable).map { .set("mp.rm.\($0)", .int(Int64($0))) })
            }
            let removing = Mutex<[String]>([])
            let told = Mutex<[Int]>(Array(repeating: 0, count: removable))
            runOnThreads(processes + 1) { index in
                do {
                    var answer: [Bool] = []
                    if index == processes {
                        for key in 0..<removable { answer.append(try provider.removeValueIfPresent(forKey: "mp.rm.\(key)")) }
                    } else {
                        let reply = try children[index].request("removeIfPresent", ChildWire.text("mp.rm."), "\(removable)", timeout: manyWrites)
                        answer = reply.count > 1 ? reply[1].map { $0 == "1" } : []
                    }
                    told.withLock { told in for (key, present) in answer.enumerated() where present && key < removable { told[key] += 1 } }
                } catch {
                    removing.withLock { $0.append(index == processes ? "this process: \(error)" : "process \(index + 1): \(error)") }
                }
            }
            for failure in removing.withLock({ $0 }) {
                checker.fail(.multiProcessCompareAndSet, "processes remove the same keys with removeValueIfPresent", expected: "no error", actual: failure)
            }
            let counts = told.withLock { $0 }
            let wrong = counts.enumerated().filter { $0.element != 1 }
            checker.check(
                .multiProcessCompareAndSet, wrong.isEmpty, "of processes removing the same keys with removeValueIfPresent, exactly one is told each key was there",
                expected: "1 for each of \(removable) keys",
                actual: "\(wrong.count) keys told otherwise: " + wrong.prefix(8).map { "mp.rm.\($0.offset): \($0.element)" }.joined(separator: ", "))

            // Processes and this one increment one counter with compare-and-set.
            let increments = max(4, options.stress.rounds / 2)
            let counting = Mutex<[String]>([])
            runOnThreads(processes + 1) { index in
                do {
                    if index == processes {
                        try Self.increment(provider, key: "mp.counter", times: increments)
                    } else {
                        _ = try children[index].request("increment", ChildWire.text("mp.counter"), "\(increments)", timeout: manyWrites)
                    }
                } catch {
                    counting.withLock { $0.append(index == processes ? "this process: \(error)" : "process \(index + 1): \(error)") }
                }
            }
            for failure in counting.withLock({ $0 }) {
                checker.fail(.multiProcessCompareAndSet, "processes increment one counter with apply(_:ifUnchanged:)", key: "mp.counter", expected: "no error", actual: failure)
            }
            _ = try? provider.synchronize()
            let counted = checker.attempt(.multiProcessCompareAndSet, "read the counter", key: "mp.counter") { try provider.value(forKey: "mp.counter") }
            checker.expectValue(
                .multiProcessCompareAndSet, counted ?? nil, .int(Int64((processes + 1) * increments)),
                "processes incrementing one counter with apply(_:ifUnchanged:) lose no increment", key: "mp.counter")

            // Writes of the same size from another process.
            guard let writer = connections.first else { return }
            for round in 0..<4 {
                let value = DefaultsValue.string("same size \(round)")
                do {
                    _ = try writer.request("apply", ChildWire.batch([.set("mp.same", value)]))
                } catch {
                    checker.fail(.suiteChildProcess, "write in a child process", expected: "ok", actual: "\(error)")
                    return
                }
                if round == 0 {
                    _ = checker.attempt(.multiProcessSynchronizeSees, "synchronize() after another process's write") { try provider.synchronize() }
                    let now = (try? provider.value(forKey: "mp.same")) ?? nil
                    checker.check(
                        .multiProcessSynchronizeSees, ConformanceExactness.equal(now, value),
                        "after synchronize(), an instance open all along reads another process's write at once",
                        key: "mp.same", expected: ConformanceText.value(value), actual: ConformanceText.value(now))
                }
                let stale = awaitValues(provider, ["mp.same": value], within: timeoutForEvents)
                checker.check(
                    .multiProcessOpenInstanceSees, stale.isEmpty, "an instance open all along reads another process's write of the same size",
                    key: "mp.same", expected: ConformanceText.value(value),
                    actual: ConformanceText.value((try? provider.value(forKey: "mp.same")) ?? nil))
                _ = try? provider.value(forKey: "mp.same")
            }
        }
    }

    /// Reads `expected` until every key holds its value or `limit` passed; returns the keys that
    /// still do not.
    func awaitValues(_ provider: any DefaultsProvider, _ expected: [String: DefaultsValue], within limit: Duration) -> [String] {
        let deadline = ContinuousClock.now + limit
        var pending = expected
        while true {
            pending = pending.filter { key, value in !ConformanceExactness.equal((try? provider.value(forKey: key)) ?? nil, value) }
            if pending.isEmpty || ContinuousClock.now > deadline { return Array(pending.keys) }
            usleep(5_000)
        }
    }
}
