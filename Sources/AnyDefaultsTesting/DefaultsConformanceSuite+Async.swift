import AnyDefaultsCore
import Dispatch
import Synchronization

extension DefaultsConformanceSuite {
    /// The async forms (`setValueAsync`, `removeValueAsync`, `applyAsync`, `removeAllAsync`) make
    /// the changes their synchronous forms make: values read back at once (also through a cache
    /// that had read the keys before), equivalent spellings are one key (also for `setValueAsync`
    /// and `removeValueAsync`), a rejected batch throws its `DefaultsError` and leaves no trace,
    /// and `removeAllAsync()` empties the store.
    func asyncFormChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let id = ConformanceCheck.batchesAsync
        func read(_ key: String) -> DefaultsValue? {
            (checker.attempt(id, "read after an async write", key: key) { try provider.value(forKey: key) }) ?? nil
        }
        for key in ["ba.k", "ba.caf\u{E9}", "ba.x", "ba.y", "ba.nfd\u{E9}"] { _ = read(key) }  // remembered as absent by a cache

        checker.attempt(id, "setValueAsync", key: "ba.k") { try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.setValueAsync(.int(1), forKey: "ba.k") } }
        checker.expectValue(id, read("ba.k"), .int(1), "setValueAsync stores the value", key: "ba.k")

        checker.attempt(id, "applyAsync") {
            try Self.wait(checker.calls) { () async throws(DefaultsError) in
                try await provider.applyAsync([
                    .set("ba.caf\u{E9}", .int(1)), .set("ba.cafe\u{301}", .int(2)), .remove("ba.k"), .set("ba.x", .string("x")),
                ])
            }
        }
        checker.expectValue(id, read("ba.k"), nil, "applyAsync applies its removals", key: "ba.k")
        checker.expectValue(id, read("ba.caf\u{E9}"), .int(2), "applyAsync applies in order, equivalent spellings being one key", key: "ba.caf\u{E9}")
        checker.expectValue(id, read("ba.x"), .string("x"), "applyAsync applies its sets", key: "ba.x")

        checker.expectError(id, .invalidKey, "applyAsync of a batch with an empty key is rejected") {
            try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.applyAsync([.set("ba.y", .int(1)), .remove("ba.x"), .set("", .int(0))]) }
        }
        checker.expectValue(id, read("ba.y"), nil, "a rejected applyAsync leaves no trace (its set)", key: "ba.y")
        checker.expectValue(id, read("ba.x"), .string("x"), "a rejected applyAsync leaves no trace (its removal)", key: "ba.x")

        checker.attempt(id, "removeValueAsync", key: "ba.x") { try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.removeValueAsync(forKey: "ba.x") } }
        checker.expectValue(id, read("ba.x"), nil, "removeValueAsync removes the key", key: "ba.x")

        // setValueAsync and removeValueAsync under an NFD spelling touch the key stored NFC.
        let nfc = "ba.nfd\u{E9}", nfd = "ba.nfde\u{301}"
        checker.attempt(id, "setValue", key: nfc) { try provider.setValue(.int(1), forKey: nfc) }
        checker.attempt(id, "setValueAsync under another spelling", key: nfd) {
            try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.setValueAsync(.int(2), forKey: nfd) }
        }
        checker.expectValue(id, read(nfc), .int(2), "setValueAsync under an NFD spelling writes the key stored NFC", key: nfc)
        let listed = checker.attempt(id, "keys() after setValueAsync under another spelling") { try provider.keys() }
        let spellings = listed?.filter { $0 == nfc } ?? []
        checker.check(
            id, spellings.count == 1, "a key written by setValue and setValueAsync in two spellings is listed once", key: nfc,
            expected: "one key", actual: listed == nil ? "an error" : ConformanceText.keys(spellings))
        checker.attempt(id, "removeValueAsync under another spelling", key: nfd) {
            try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.removeValueAsync(forKey: nfd) }
        }
        checker.expectValue(id, read(nfc), nil, "removeValueAsync under an NFD spelling removes the key stored NFC", key: nfc)

        checker.attempt(id, "removeAllAsync") { try Self.wait(checker.calls) { () async throws(DefaultsError) in try await provider.removeAllAsync() } }
        let left = checker.attempt(id, "keys() after removeAllAsync") { try provider.keys() }
        checker.check(
            id, left?.isEmpty == true, "removeAllAsync removes every key", expected: "no key",
            actual: left.map { ConformanceText.keys($0) } ?? "an error")
        checker.expectValue(id, read("ba.caf\u{E9}"), nil, "removeAllAsync removes every value", key: "ba.caf\u{E9}")
    }

    /// Runs `body` in a task and waits for it on this thread (the suite's own, not one of Swift
    /// concurrency's).
    /// The whole wait is a watched call of `watch`: a task that never starts (every thread of
    /// the pool held) fails the group as a hung call does.
    static func wait(_ watch: ConformanceCallWatch, _ body: @escaping @Sendable () async throws(DefaultsError) -> Void) throws(DefaultsError) {
        let id = watch.begin(.asyncTask)
        defer { watch.end(id) }
        let outcome = Mutex<DefaultsError??>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(DefaultsError) {
                try await body()
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            done.signal()
        }
        done.wait()
        if case .some(.some(let error)) = outcome.withLock({ $0 }) { throw error }
    }
}
