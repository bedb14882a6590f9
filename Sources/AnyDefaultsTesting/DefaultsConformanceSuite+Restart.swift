import AnyDefaultsCore
import Foundation

extension DefaultsConformanceSuite {
    /// Persistence across a real restart (``DefaultsCapabilities/persistent``, with a
    /// ``ChildProcess``): what this process wrote — non-ASCII and long keys, large values,
    /// overwrites, single removals, after a `removeAll()` — is exactly what a new process reads;
    /// what a new process wrote, overwrote, removed and cleared is exactly what this process reads
    /// after reopening; and the last of the same-size writes two instances made in turn is what
    /// survives. A provider that keeps its data in a cache for the life of the process, or writes
    /// only part of it, passes reopening in one process but fails here.
    func restartChecks() throws -> ConformanceReport {
        try groupOnStorage(.restart) { checker, storage in
            guard let child = child else { return }
            var expected: [String: DefaultsValue] = [:]
            let secondLong = "rs.long.16KiB." + String(repeating: "é", count: 8_192)
            let large = ConformanceValues.large
            do {
                guard let provider = reopen(storage, checker, "open the provider") else { return }
                checker.attempt(.restartChildReads, "write keys to be cleared") {
                    try provider.apply((0..<20).map { .set("rs.cleared.\($0)", .int(Int64($0))) })
                }
                checker.attempt(.restartChildReads, "removeAll()") { try provider.removeAll() }
                var writes: [(String, DefaultsValue)] = [
                    ("rs.ключ.設定.🔑", .string("non-ASCII key")),
                    ("rs.cafe\u{301}", .string("decomposed key")),
                    ("rs.long.2KiB." + String(repeating: "k", count: 2_048), .int(2)),
                    ("rs.overwritten", .string("first")),
                    ("rs.removed", .string("to be removed")),
                    ("rs.nested", ConformanceValues.nestedExtremes[0].value),
                    ("rs.strings", .array(ConformanceValues.exactStrings.map(\.value))),
                ]
                writes += large.enumerated().map { ("rs.large.\($0.offset)", $0.element.value) }
                for (key, value) in writes {
                    if checker.attempt(.restartChildReads, "write", key: key, { try provider.setValue(value, forKey: key) }) != nil { expected[key] = value }
                }
                do {
                    try provider.setValue(.int(16), forKey: secondLong)
                    expected[secondLong] = .int(16)
                } catch let error as DefaultsError where error.code == .invalidKey {
                    // Long keys may be rejected (the keys group checks how).
                } catch {
                    checker.fail(.restartChildReads, "write under a 16 KiB key", key: secondLong, expected: "success or invalidKey", actual: ConformanceText.error(error))
                }
                checker.attempt(.restartChildReads, "overwrite", key: "rs.overwritten") { try provider.setValue(.string("second"), forKey: "rs.overwritten") }
                expected["rs.overwritten"] = .string("second")
                checker.attempt(.restartChildReads, "remove", key: "rs.removed") { try provider.removeValue(forKey: "rs.removed") }
                expected["rs.removed"] = nil
                checker.attempt(.restartChildReads, "apply a batch") {
                    try provider.apply([.set("rs.batch", .int(1)), .remove("rs.large.0"), .set("rs.ключ.設定.🔑", .string("overwritten in a batch"))])
                }
                expected["rs.batch"] = .int(1)
                expected["rs.large.0"] = nil
                expected["rs.ключ.設定.🔑"] = .string("overwritten in a batch")
            }
            // This process's instance is released; a new process reads.
            guard let connection = startChild(child, storage, checker) else { return }
            compareWithChild(connection, expected: expected, absent: ["rs.removed", "rs.cleared.0", "rs.large.0"], checker, .restartChildReads)

            // The new process clears, writes, overwrites and removes; then exits.
            var childWrites: [DefaultsChange] = [
                .set("rc.키", .string("from the child")), .set("rc.large", large[1].value), .set("rc.gone", .int(1)),
                .set("rc.over", .int(1)),
            ]
            childWrites += (0..<5).map { .set("rc.n.\($0)", .double(Double($0) + 0.1)) }
            do {
                _ = try connection.request("removeAll")
                _ = try connection.request("apply", ChildWire.batch(childWrites))
                _ = try connection.request("apply", ChildWire.batch([.set("rc.over", .string("over")), .remove("rc.gone")]))
                _ = try connection.request("apply", ChildWire.batch([.remove("rc.n.4")]))
                try connection.quit()
            } catch {
                checker.fail(.suiteChildProcess, "the child writes and exits", expected: "ok", actual: "\(error)")
                return
            }
            var afterChild: [String: DefaultsValue] = [:]
            for change in childWrites { afterChild[change.key] = change.value }
            afterChild["rc.over"] = .string("over")
            afterChild["rc.gone"] = nil
            afterChild["rc.n.4"] = nil

            do {
                guard let first = reopen(storage, checker, "reopen after the child exited") else { return }
                for (key, value) in afterChild {
                    let read = checker.attempt(.restartParentReads, "read", key: key) { try first.value(forKey: key) }
                    checker.expectValue(.restartParentReads, read ?? nil, value, "a value another process wrote survives its exit", key: key)
                }
                for key in ["rc.gone", "rc.n.4"] + Array(expected.keys) {
                    let read = checker.attempt(.restartParentReads, "read", key: key) { try first.value(forKey: key) }
                    checker.expectValue(.restartParentReads, read ?? nil, nil, "what another process removed or cleared stays removed", key: key)
                }
                checkKeys(first, expected: afterChild, checker, .restartParentReads, "keys() are what another process left")

                // Two instances write values of the same size in turn; the last one survives.
                guard let second = reopen(storage, checker, "open a second instance") else { return }
                for round in 0..<6 {
                    let writer = round.isMultiple(of: 2) ? first : second
                    checker.attempt(.restartParentReads, "write a value of the same size", key: "rs.same") {
                        try writer.setValue(.string("round \(round)"), forKey: "rs.same")
                    }
                }
                afterChild["rs.same"] = .string("round 5")
            }
            guard let last = startChild(child, storage, checker) else { return }
            compareWithChild(last, expected: afterChild, absent: ["rc.gone"], checker, .restartChildReads)
            do { try last.quit() } catch { checker.fail(.suiteChildProcess, "the child exits", expected: "status 0", actual: "\(error)") }
        }
    }

    /// Starts the child on `storage` and opens its provider, failing ``ConformanceCheck/suiteChildProcess`` if that fails.
    func startChild(_ child: ChildProcess, _ storage: ConformanceStorage, _ checker: ConformanceChecker) -> ChildConnection? {
        do {
            let connection = try ChildConnection(child, storage: storage, timeout: options.timeout)
            let answer = try connection.request("open")
            if answer.count > 1, let raw = UInt32(answer[1]) {
                let reported = DefaultsCapabilities(rawValue: raw)
                checker.check(
                    .capabilitiesStable, reported == capabilities, "the provider in the child process reports the same capabilities",
                    expected: "\(capabilities)", actual: "\(reported)")
            }
            return connection
        } catch {
            checker.fail(.suiteChildProcess, "start the child process and open the provider", expected: "ok", actual: "\(error)")
            return nil
        }
    }

    /// Compares what the child reads (keys, allValues and each value) with `expected`.
    func compareWithChild(
        _ connection: ChildConnection, expected: [String: DefaultsValue], absent: [String], _ checker: ConformanceChecker, _ id: ConformanceCheck
    ) {
        do {
            let keys = try ChildWire.keys(from: connection.payload("keys"))
            checker.check(id, keysMatch(keys, Set(expected.keys)), "keys() in another process", expected: "\(expected.count) distinct keys", actual: keyListProblems(keys, Set(expected.keys)))
            let all = try ChildWire.entries(from: connection.payload("all"))
            let found = Dictionary(all, uniquingKeysWith: { first, _ in first })
            for (key, value) in expected {
                checker.expectValue(id, found[key], value, "allValues() in another process", key: key)
                checker.expectValue(id, try connection.value(forKey: key), value, "a value read in another process", key: key)
            }
            for key in absent {
                checker.expectValue(id, try connection.value(forKey: key), nil, "a removed key in another process", key: key)
            }
        } catch {
            checker.fail(.suiteChildProcess, "read in the child process", expected: "answers", actual: "\(error)")
        }
    }
}
