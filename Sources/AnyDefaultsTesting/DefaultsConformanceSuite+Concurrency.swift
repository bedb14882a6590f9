import AnyDefaultsCore
import Foundation
import Synchronization

extension DefaultsConformanceSuite {
    /// Many threads at once: writers of distinct keys lose no update (single writes and batches);
    /// readers of a key that writers keep replacing only ever see whole values, never a mix of
    /// two writes; nothing throws.
    @discardableResult
    public func concurrency() throws -> ConformanceReport {
        try group("concurrency") { checker, _, provider in
            let threads = 6
            let keysPerThread = 30

            // Distinct keys: every thread writes its own keys, half singly, half in small batches.
            runOnThreads(threads) { thread in
                for index in stride(from: 0, to: keysPerThread / 2, by: 1) {
                    let key = "c.\(thread).\(index)"
                    checker.attempt("concurrent write", key: key) { try provider.setValue(.int(Int64(thread * 1000 + index)), forKey: key) }
                }
                for start in stride(from: keysPerThread / 2, to: keysPerThread, by: 5) {
                    let batch = (start..<min(start + 5, keysPerThread)).map {
                        DefaultsChange.set("c.\(thread).\($0)", .int(Int64(thread * 1000 + $0)))
                    }
                    checker.attempt("concurrent batch", key: batch.first?.key) { try provider.apply(batch) }
                }
            }
            var lost = 0
            for thread in 0..<threads {
                for index in 0..<keysPerThread {
                    let key = "c.\(thread).\(index)"
                    let read = checker.attempt("read after concurrent writes", key: key) { try provider.value(forKey: key) }
                    if read ?? nil != .int(Int64(thread * 1000 + index)) { lost += 1 }
                }
            }
            checker.check(lost == 0, "no lost update on distinct keys", expected: "\(threads * keysPerThread) keys with their values", actual: "\(lost) lost or wrong")
            let count = checker.attempt("keys() after concurrent writes") { try provider.keys().filter { $0.hasPrefix("c.") }.count }
            checker.check(count == threads * keysPerThread, "keys() after concurrent writes", expected: "\(threads * keysPerThread)", actual: "\(count.map(String.init) ?? "an error")")

            // One shared key: each write stores a uniform value (every element the writer's mark);
            // a torn read would mix marks or lengths.
            @Sendable func uniform(_ mark: Int) -> DefaultsValue {
                .array(Array(repeating: .string(String(repeating: Character(UnicodeScalar(UInt8(65 + mark))), count: 64)), count: 32))
            }
            @Sendable func isUniform(_ value: DefaultsValue?) -> Bool {
                guard case .array(let items)? = value, items.count == 32, let first = items.first else { return value == nil }
                return items.allSatisfy { $0 == first }
            }
            let writers = 3
            let rounds = 20
            // Readers keep reading until every writer is done, so that a loaded machine that
            // schedules the writers late cannot leave the readers with nothing to catch.
            let writersLeft = Mutex(writers)
            runOnThreads(writers * 2) { worker in
                if worker < writers {
                    for round in 0..<rounds {
                        checker.attempt("write the shared key", key: "c.shared") { try provider.setValue(uniform((worker + round) % 26), forKey: "c.shared") }
                    }
                    writersLeft.withLock { $0 -= 1 }
                    return
                }
                var round = 0
                while round < rounds || writersLeft.withLock({ $0 > 0 }) {
                    round += 1
                    let read = checker.attempt("read the shared key", key: "c.shared") { try provider.value(forKey: "c.shared") }
                    if let read, !isUniform(read) {
                        checker.fail("no torn read of a key being replaced", key: "c.shared", expected: "one writer's whole value", actual: describe(read))
                        return
                    }
                }
            }
            let final = checker.attempt("read the shared key at the end", key: "c.shared") { try provider.value(forKey: "c.shared") }
            checker.check(isUniform(final ?? nil) && final != nil, "the shared key holds one writer's whole value", key: "c.shared", expected: "a uniform array", actual: describe(final ?? nil))
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
