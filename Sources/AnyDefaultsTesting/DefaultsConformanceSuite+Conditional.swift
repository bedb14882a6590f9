import AnyDefaultsCore
import Synchronization

extension DefaultsConformanceSuite {
    /// `apply(_:ifUnchanged:)`: it applies a batch exactly when every expected key holds exactly
    /// the value given (type and bits: `.int(1)` is not `.double(1)`, `-0.0` is not `0.0`, also
    /// inside containers; a NaN is a NaN; strings and dictionary keys by their Unicode scalars;
    /// `nil`: absent), under any spelling of the key, and otherwise changes nothing.
    func conditionalApplyChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let id = ConformanceCheck.batchesConditional
        checker.attempt(id, "seed", key: "cw.") {
            try provider.apply([
                .set("cw.int", .int(1)), .set("cw.zero", .double(-0.0)), .set("cw.caf\u{E9}", .string("x")), .remove("cw.absent"),
            ] + Self.comparedValues.map { DefaultsChange.set("cw.\($0.key)", $0.value) })
        }
        let cases: [(detail: String, expected: [String: DefaultsValue?], applies: Bool)] = [
            ("an absent key expected absent", ["cw.absent": nil], true),
            ("a key that holds the value expected", ["cw.int": .int(1)], true),
            ("every key holding its value", ["cw.int": .int(1), "cw.zero": .double(-0.0), "cw.absent": nil], true),
            ("the key spelled in another canonically equivalent form", ["cw.cafe\u{301}": .string("x")], true),
            ("no condition", [:], true),
            ("an Int expected where a Double of the same number is stored", ["cw.int": .double(1)], false),
            ("0.0 expected where -0.0 is stored", ["cw.zero": .double(0.0)], false),
            ("a key expected absent that holds a value", ["cw.int": nil], false),
            ("a key expected that is absent", ["cw.absent": .int(1)], false),
            ("one of several keys changed", ["cw.int": .int(1), "cw.caf\u{E9}": .string("y")], false),
            ("a NaN expected where a NaN is stored", ["cw.nan": .double(.nan)], true),
            ("the same numbers inside an array", ["cw.nested": .array([.int(1), .double(-0.0)])], true),
            ("the same string, NFC as stored", ["cw.nfc": .string("caf\u{E9}")], true),
            ("numbers inside an array equal only by value ([1.0, 0.0] for [1, -0.0])", ["cw.nested": .array([.double(1), .double(0.0)])], false),
            ("an NFD string where its NFC spelling is stored", ["cw.nfc": .string("cafe\u{301}")], false),
            ("a dictionary keyed NFD where its NFC spelling is stored", ["cw.dict": .dictionary(["cafe\u{301}": .int(1)])], false),
        ]
        for (index, testCase) in cases.enumerated() {
            let marker = "cw.applied.\(index)"
            let applied = checker.attempt(id, "apply(_:ifUnchanged:) with \(testCase.detail)", key: marker) {
                try provider.apply([.set(marker, .int(Int64(index))), .remove("cw.never")], ifUnchanged: testCase.expected)
            }
            checker.check(
                id, applied == testCase.applies, "apply(_:ifUnchanged:) with \(testCase.detail) returns whether it applied", key: marker,
                expected: "\(testCase.applies)", actual: applied.map { "\($0)" } ?? "an error")
            let read = checker.attempt(id, "read after apply(_:ifUnchanged:)", key: marker) { try provider.value(forKey: marker) }
            checker.expectValue(
                id, read ?? nil, testCase.applies ? .int(Int64(index)) : nil,
                "apply(_:ifUnchanged:) with \(testCase.detail) \(testCase.applies ? "applies the batch" : "changes nothing")", key: marker)
        }
        var compared = ["cw.int": DefaultsValue.int(1), "cw.zero": .double(-0.0), "cw.caf\u{E9}": .string("x")]
        for (key, value) in Self.comparedValues { compared["cw.\(key)"] = value }
        for (key, value) in compared {
            let read = checker.attempt(id, "read a compared key", key: key) { try provider.value(forKey: key) }
            checker.expectValue(id, read ?? nil, value, "comparing does not change the compared keys", key: key)
        }
        checker.attempt(id, "clean up") {
            try provider.apply(
                (["cw.int", "cw.zero", "cw.caf\u{E9}", "cw.absent"] + Self.comparedValues.keys.map { "cw.\($0)" } + cases.indices.map { "cw.applied.\($0)" })
                    .map { .remove($0) })
        }
    }

    /// `removeValueIfPresent(forKey:)` tells whether the key held a value; `removeValues(ifUnchanged:)`
    /// removes exactly the keys that hold exactly the value given, under any spelling, and returns
    /// them in UTF-8 order.
    func conditionalRemovalChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let id = ConformanceCheck.removalConditional
        checker.attempt(id, "seed", key: "cr.") {
            try provider.apply([
                .set("cr.present", .int(1)), .set("cr.b", .int(2)), .set("cr.a", .string("a")), .set("cr.\u{E9}", .bool(true)),
                .set("cr.changed", .int(3)), .set("cr.zero", .double(0.0)), .set("cr.spelled\u{E9}", .int(4)),
            ] + Self.comparedValues.map { DefaultsChange.set("cr.\($0.key)", $0.value) })
        }
        let present = checker.attempt(id, "removeValueIfPresent of a stored key", key: "cr.present") { try provider.removeValueIfPresent(forKey: "cr.present") }
        checker.check(id, present == true, "removeValueIfPresent tells that a stored key was there", key: "cr.present", expected: "true", actual: "\(present.map { "\($0)" } ?? "an error")")
        let again = checker.attempt(id, "removeValueIfPresent of a removed key", key: "cr.present") { try provider.removeValueIfPresent(forKey: "cr.present") }
        checker.check(id, again == false, "removeValueIfPresent tells that a removed key was not there", key: "cr.present", expected: "false", actual: "\(again.map { "\($0)" } ?? "an error")")
        let read = checker.attempt(id, "read a key removed if present", key: "cr.present") { try provider.value(forKey: "cr.present") }
        checker.expectValue(id, read ?? nil, nil, "removeValueIfPresent removes the key", key: "cr.present")
        // The key as stored (NFC), asked for in its NFD spelling.
        let spelled = checker.attempt(id, "removeValueIfPresent of another spelling of a stored key", key: "cr.spellede\u{301}") {
            try provider.removeValueIfPresent(forKey: "cr.spellede\u{301}")
        }
        checker.check(
            id, spelled == true, "removeValueIfPresent tells that a key stored in another canonically equivalent spelling was there", key: "cr.spellede\u{301}",
            expected: "true", actual: "\(spelled.map { "\($0)" } ?? "an error")")
        let readSpelled = checker.attempt(id, "read a key removed if present in another spelling", key: "cr.spelled\u{E9}") { try provider.value(forKey: "cr.spelled\u{E9}") }
        checker.expectValue(id, readSpelled ?? nil, nil, "removeValueIfPresent removes the key under another spelling", key: "cr.spelled\u{E9}")

        let expected: [String: DefaultsValue] = [
            "cr.b": .int(2), "cr.a": .string("a"), "cr.e\u{301}": .bool(true),  // unchanged (the last in another spelling)
            "cr.changed": .double(3), "cr.zero": .double(-0.0), "cr.never": .int(0),  // another type, other bits, absent
            "cr.nan": .double(.nan),  // unchanged: a NaN is a NaN
            "cr.nested": .array([.double(1), .double(0.0)]), "cr.nfc": .string("cafe\u{301}"),  // equal only by value, by ==
            "cr.dict": .dictionary(["cafe\u{301}": .int(1)]),
        ]
        let removed = checker.attempt(id, "removeValues(ifUnchanged:)") { try provider.removeValues(ifUnchanged: expected) }
        let canonical = ["cr.a", "cr.b", "cr.nan", "cr.\u{E9}"]
        checker.check(
            id, removed.map { Set($0.map { $0.precomposedStringWithCanonicalMapping }) == Set(canonical) } ?? false,
            "removeValues(ifUnchanged:) returns exactly the keys that held the values given",
            expected: ConformanceText.keys(canonical), actual: removed.map { ConformanceText.keys($0) } ?? "an error")
        if let removed {
            let bytes = removed.map { Array($0.utf8) }
            checker.check(
                id, zip(bytes, bytes.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "removeValues(ifUnchanged:) returns the keys in UTF-8 order",
                expected: "ascending UTF-8 order", actual: removed.map(ConformanceText.literal).joined(separator: ", "))
        }
        var kept: [String: DefaultsValue?] = ["cr.a": nil, "cr.b": nil, "cr.\u{E9}": nil, "cr.nan": nil, "cr.changed": .int(3), "cr.zero": .double(0.0)]
        for (key, value) in Self.comparedValues where key != "nan" { kept["cr.\(key)"] = value }
        for (key, value) in kept {
            let read = checker.attempt(id, "read after removeValues(ifUnchanged:)", key: key) { try provider.value(forKey: key) }
            checker.expectValue(
                id, read ?? nil, value, value == nil ? "removeValues(ifUnchanged:) removes an unchanged key" : "removeValues(ifUnchanged:) keeps a changed key", key: key)
        }
        checker.attempt(id, "clean up") { try provider.apply((["cr.changed", "cr.zero"] + Self.comparedValues.keys.map { "cr.\($0)" }).map { .remove($0) }) }
    }

    /// Values that a loose comparison takes for others: a NaN (IEEE `==` never matches it),
    /// numbers inside a container (jsonb's `=` compares them by value), an NFC string and a
    /// dictionary keyed NFC (Swift's `==` matches their NFD spellings). Stored under `cw.` and
    /// `cr.` by the conditional checks.
    static let comparedValues: [String: DefaultsValue] = [
        "nan": .double(.nan), "nested": .array([.int(1), .double(-0.0)]), "nfc": .string("caf\u{E9}"),
        "dict": .dictionary(["caf\u{E9}": .int(1)]),
    ]

    /// Threads that increment one counter with `apply(_:ifUnchanged:)`, each trying again when
    /// its comparison failed, lose no increment: the comparison and the write are one step.
    func compareAndSetThreadChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider) {
        let threads = options.stress.threads
        let increments = max(4, options.stress.rounds / 2)
        let key = "cas.counter"
        let failures = Mutex<[String]>([])
        runOnThreads(threads) { _ in
            do {
                try Self.increment(provider, key: key, times: increments)
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        for failure in failures.withLock({ $0 }) {
            checker.fail(.concurrencyCompareAndSet, "increment a counter with apply(_:ifUnchanged:)", key: key, expected: "no error", actual: failure)
        }
        let read = checker.attempt(.concurrencyCompareAndSet, "read the counter", key: key) { try provider.value(forKey: key) }
        checker.expectValue(
            .concurrencyCompareAndSet, read ?? nil, .int(Int64(threads * increments)),
            "threads incrementing one counter with apply(_:ifUnchanged:) lose no increment", key: key)
        checker.attempt(.concurrencyCompareAndSet, "clean up", key: key) { try provider.removeValue(forKey: key) }

        // Threads removing one key at once: exactly one is told it was there.
        let rounds = max(4, options.stress.rounds / 4)
        var told: [Int] = []
        for round in 0..<rounds {
            let key = "cas.remove.\(round)"
            checker.attempt(.concurrencyCompareAndSet, "write the key to remove", key: key) { try provider.setValue(.int(Int64(round)), forKey: key) }
            let present = Atomic<Int>(0)
            runOnThreads(threads) { _ in
                if (try? provider.removeValueIfPresent(forKey: key)) == true { present.add(1, ordering: .relaxed) }
            }
            told.append(present.load(ordering: .relaxed))
        }
        checker.check(
            .concurrencyCompareAndSet, told.allSatisfy { $0 == 1 }, "of threads removing one key at once with removeValueIfPresent, exactly one is told it was there",
            expected: "1 in each of \(rounds) rounds", actual: told.map(String.init).joined(separator: ", "))
    }

    /// Adds 1 to the integer under `key` (absent: 0) `times` times with compare-and-set, trying
    /// again while another writer came between; gives up after `50 × times + 1000` tries (a
    /// provider that compares with something other than what it reads never succeeds).
    static func increment(_ provider: any DefaultsProvider, key: String, times: Int) throws(DefaultsError) {
        var done = 0
        var tries = 0
        let limit = times * 50 + 1_000
        while done < times {
            tries += 1
            guard tries <= limit else {
                throw DefaultsError(
                    .busy, "The comparison failed \(limit) times for \(times - done) of \(times) increments.",
                    backend: "DefaultsConformanceSuite", key: key)
            }
            let old = try provider.value(forKey: key)
            var count: Int64 = 0
            if case .int(let stored)? = old { count = stored }
            if try provider.apply([.set(key, .int(count + 1))], ifUnchanged: [key: old]) { done += 1 }
        }
    }
}
