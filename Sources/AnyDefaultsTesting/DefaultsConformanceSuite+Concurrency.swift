import AnyDefaultsCore
import Foundation
import Synchronization

extension DefaultsConformanceSuite {
    /// Many threads at once: writers of distinct keys lose no update (single writes and batches);
    /// readers of a key that writers keep replacing only ever see whole values — arrays, and
    /// strings from a kilobyte to megabytes — never a mix of two writes; writers incrementing one
    /// counter with compare-and-set lose no increment; nothing throws.
    func concurrencyChecks() throws -> ConformanceReport {
        try group(.concurrency) { checker, _, provider in
            let threads = options.stress.threads
            let keysPerThread = options.stress.rounds + 6

            // Distinct keys: every thread writes its own keys, half singly, half in small batches,
            // while two more list the store: the keys only ever grow, each listed once.
            let writing = Mutex(threads)
            let listings = Mutex<[String]>([])
            runOnThreads(threads + 2) { thread in
                guard thread < threads else {
                    var seen = 0
                    while writing.withLock({ $0 > 0 }) {
                        let listed = thread == threads
                            ? checker.attempt(.concurrencyNoError, "keys() while others write") { try provider.keys() }
                            : checker.attempt(.concurrencyNoError, "allValues() while others write") { try Array(provider.allValues().keys) }
                        guard let listed else { return }
                        let mine = listed.filter { $0.hasPrefix("c.") }
                        if mine.count < seen || Set(mine).count != mine.count {
                            listings.withLock { $0.append("\(mine.count) keys (\(Set(mine).count) distinct) after \(seen)") }
                            return
                        }
                        seen = mine.count
                    }
                    return
                }
                defer { writing.withLock { $0 -= 1 } }
                for index in 0..<(keysPerThread / 2) {
                    let key = "c.\(thread).\(index)"
                    checker.attempt(.concurrencyNoError, "concurrent write", key: key) { try provider.setValue(.int(Int64(thread * 1000 + index)), forKey: key) }
                }
                for start in stride(from: keysPerThread / 2, to: keysPerThread, by: 5) {
                    let batch = (start..<min(start + 5, keysPerThread)).map {
                        DefaultsChange.set("c.\(thread).\($0)", .int(Int64(thread * 1000 + $0)))
                    }
                    checker.attempt(.concurrencyNoError, "concurrent batch", key: batch.first?.key) { try provider.apply(batch) }
                }
            }
            checker.check(
                .concurrencyNoTornRead, listings.withLock { $0.isEmpty }, "keys() and allValues() during writes of new keys only grow, each key once",
                expected: "whole listings", actual: listings.withLock { $0.joined(separator: "; ") })
            var lost: [String] = []
            for thread in 0..<threads {
                for index in 0..<keysPerThread {
                    let key = "c.\(thread).\(index)"
                    let read = checker.attempt(.concurrencyNoError, "read after concurrent writes", key: key) { try provider.value(forKey: key) }
                    if read ?? nil != .int(Int64(thread * 1000 + index)) { lost.append(key) }
                }
            }
            checker.check(
                .concurrencyNoLostUpdate, lost.isEmpty, "no lost update on distinct keys",
                expected: "\(threads * keysPerThread) keys with their values", actual: "\(lost.count) lost or wrong: \(ConformanceText.keys(lost))")
            let count = checker.attempt(.concurrencyNoError, "keys() after concurrent writes") { try provider.keys().filter { $0.hasPrefix("c.") }.count }
            checker.check(
                .concurrencyNoLostUpdate, count == threads * keysPerThread, "keys() after concurrent writes",
                expected: "\(threads * keysPerThread)", actual: "\(count.map(String.init) ?? "an error")")

            // Before the large shared values, so that allValues() stays cheap.
            if capabilities.contains(.atomicBatch) { wholeBatchCheck(checker, provider) }

            // One shared key per shape and size: each write stores a uniform value (every element
            // or character the writer's mark); a torn read would mix marks or lengths.
            var shapes: [(name: String, make: @Sendable (Int) -> DefaultsValue, isWhole: @Sendable (DefaultsValue) -> Bool, rounds: Int)] = [
                ("an array of 32 strings", { mark in
                    .array(Array(repeating: .string(String(repeating: Self.mark(mark), count: 64)), count: 32))
                }, { value in
                    guard case .array(let items) = value, items.count == 32, let first = items.first,
                        case .string(let text) = first, text.count == 64, Set(text).count == 1
                    else { return false }
                    return items.allSatisfy { $0 == first }
                }, options.stress.rounds),
            ]
            var size = 1_024
            while size <= options.stress.largestValue {
                let length = size
                shapes.append(("a string of \(length) bytes", { mark in .string(String(repeating: Self.mark(mark), count: length)) }, { value in
                    guard case .string(let text) = value, text.utf8.count == length, let first = text.utf8.first else { return false }
                    return text.utf8.allSatisfy { $0 == first }
                }, max(4, options.stress.rounds * 1_024 / length)))
                size *= 32
            }
            for (index, shape) in shapes.enumerated() {
                let key = "c.shared.\(index)"
                tornReadCheck(checker, provider, key: key, name: shape.name, rounds: shape.rounds, make: shape.make, isWhole: shape.isWhole)
            }
            compareAndSetThreadChecks(checker, provider)
        }
    }

    /// With ``DefaultsCapabilities/atomicBatch``, readers see a batch whole or not at all: a writer
    /// sets 16 keys to the round's number in one batch per round, while one reader lists
    /// `allValues()` (one round on every key) and another reads the keys one after another (in
    /// the batch's order: never an earlier round than the key before).
    func wholeBatchCheck(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let id = ConformanceCheck.concurrencyWholeBatches
        let keys = (0..<16).map { "c.batch.\($0)" }
        let rounds = max(16, options.stress.rounds * 2)
        checker.attempt(id, "write the first batch") { try provider.apply(keys.map { .set($0, .int(0)) }) }
        let writing = Atomic<Bool>(true)
        let mixed = Mutex<[String]>([])
        runOnThreads(3) { thread in
            if thread == 0 {
                defer { writing.store(false, ordering: .releasing) }
                for round in 1...rounds {
                    let batch = keys.map { DefaultsChange.set($0, .int(Int64(round))) }
                    guard checker.attempt(.concurrencyNoError, "apply a batch while others read", key: keys[0], { try provider.apply(batch) }) != nil else { return }
                }
                return
            }
            // Until the writer is done, and at least a few times (a late start must still read).
            var reads = 0
            while reads < 4 || writing.load(ordering: .acquiring), mixed.withLock({ $0.isEmpty }) {
                reads += 1
                if thread == 1 {
                    guard let all = checker.attempt(.concurrencyNoError, "allValues() while batches are applied", { try provider.allValues() }) else { return }
                    let seen = keys.map { all[$0].map(ConformanceText.value) ?? "absent" }
                    if Set(seen).count > 1 { mixed.withLock { $0.append("allValues() held \(seen.joined(separator: ", "))") } }
                } else {
                    var seen: [String] = []
                    var last = Int64.min
                    for key in keys {
                        guard let read = checker.attempt(.concurrencyNoError, "read while batches are applied", key: key, { try provider.value(forKey: key) }) else { return }
                        seen.append(read.map(ConformanceText.value) ?? "absent")
                        guard case .int(let round)? = read else { continue }
                        if round < last {
                            mixed.withLock { $0.append("reads one after another gave \(seen.joined(separator: ", "))") }
                            break
                        }
                        last = round
                    }
                }
            }
        }
        let problems = mixed.withLock { $0 }
        checker.check(
            id, problems.isEmpty, "readers see each batch whole: never some of its keys with their new values and others with their old ones",
            expected: "one batch's values on every key", actual: problems.joined(separator: "; "))
        checker.attempt(id, "clean up") { try provider.apply(keys.map { .remove($0) }) }
    }

    /// A letter per writer and round.
    static func mark(_ number: Int) -> Character { Character(UnicodeScalar(UInt8(65 + number % 26))) }

    /// Writers replace `key` with whole values while as many readers read it, until every
    /// writer is done; no read may see anything but a whole value.
    func tornReadCheck(
        _ checker: ConformanceChecker, _ provider: any DefaultsProvider, key: String, name: String, rounds: Int,
        make: @escaping @Sendable (Int) -> DefaultsValue, isWhole: @escaping @Sendable (DefaultsValue) -> Bool
    ) {
        let writers = max(2, options.stress.threads / 2)
        let writersLeft = Mutex(writers)
        let torn = Atomic<Bool>(false)
        runOnThreads(writers * 2) { worker in
            if worker < writers {
                for round in 0..<rounds {
                    checker.attempt(.concurrencyNoError, "write \(name)", key: key) { try provider.setValue(make(worker + round * writers), forKey: key) }
                }
                writersLeft.withLock { $0 -= 1 }
                return
            }
            // Readers keep reading until every writer is done, so that a loaded machine that
            // schedules the writers late cannot leave the readers with nothing to catch.
            var round = 0
            while round < rounds || writersLeft.withLock({ $0 > 0 }) {
                round += 1
                let read = checker.attempt(.concurrencyNoError, "read \(name)", key: key) { try provider.value(forKey: key) }
                if let value = read ?? nil, !isWhole(value) {
                    if !torn.exchange(true, ordering: .relaxed) {
                        checker.fail(.concurrencyNoTornRead, "no torn read of \(name) being replaced", key: key, expected: "one writer's whole value", actual: ConformanceText.value(value))
                    }
                    return
                }
            }
        }
        let final = checker.attempt(.concurrencyNoError, "read \(name) at the end", key: key) { try provider.value(forKey: key) }
        checker.check(
            .concurrencyNoTornRead, (final ?? nil).map(isWhole) ?? false, "the shared key holds one writer's whole value at the end", key: key,
            expected: "one writer's whole value", actual: ConformanceText.value(final ?? nil))
    }

    /// A value at the maximum depth written, read, listed and observed on a thread with a
    /// 512 KiB stack: in the child process when there is one (so that a provider that overflows
    /// the stack fails this check instead of ending the test process), else in this process.
    func smallStackChecks() throws -> ConformanceReport {
        try groupOnStorage(.smallStack) { checker, storage in
            let depth = DefaultsValue.maximumNestingDepth
            if let child, ChildConnection.isSupported {
                guard let connection = startChild(child, storage, checker) else { return }
                do {
                    let answer = try connection.request("deep", "\(depth)")
                    let problem = answer.first == "mismatch" && answer.count > 1 ? try ChildWire.text(from: answer[1]) : nil
                    checker.check(.smallStackMaximumDepth, problem == nil, "a value at the maximum depth on a 512 KiB stack", expected: "it works", actual: problem ?? "")
                    try connection.quit()
                } catch {
                    let signal = connection.terminatingSignal.map { "the child process crashed (signal \($0)); " } ?? ""
                    checker.fail(.smallStackMaximumDepth, "a value at the maximum depth on a 512 KiB stack", expected: "no crash", actual: signal + "\(error)")
                }
            } else {
                guard let provider = reopen(storage, checker, "open the provider") else { return }
                let problem = SmallStackProbe.run(provider, depth: depth)
                checker.check(.smallStackMaximumDepth, problem == nil, "a value at the maximum depth on a 512 KiB stack", expected: "it works", actual: problem ?? "")
            }
        }
    }
}

/// Runs `body` on `count` threads of their own at once (not a pool that may run them one after
/// another), and returns when all have finished.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            start.wait()
            body(index)
            done.leave()
        }
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    done.wait()
}
