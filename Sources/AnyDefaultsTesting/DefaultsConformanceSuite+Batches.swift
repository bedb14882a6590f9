import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Batches: changes apply in order (the last change to a key wins, also between equivalent
    /// spellings); an empty batch changes nothing; a batch with an invalid key or value anywhere
    /// (any position, any branch of a value) is rejected with a `DefaultsError` and leaves no trace;
    /// large batches of odd sizes apply whole; reads made before a batch are not served stale; a
    /// compare-and-set batch applies exactly when its conditions hold; the async forms of the
    /// writes do what the synchronous ones do.
    func batchChecks() throws -> ConformanceReport {
        try group(.batches) { checker, _, provider in
            checker.attempt(.batchesOrder, "seed", key: "b.kept") { try provider.setValue(.string("original"), forKey: "b.kept") }
            checker.attempt(.batchesOrder, "apply a mixed batch") {
                try provider.apply([
                    .set("b.1", .int(1)), .set("b.2", .int(2)), .remove("b.1"), .set("b.3", .int(3)),
                    .set("b.2", .int(4)), .remove("b.absent"), .remove("b.5"), .set("b.5", .int(5)), .set("b.6", .int(6)), .remove("b.6"),
                ])
            }
            var expected: [String: DefaultsValue] = ["b.2": .int(4), "b.3": .int(3), "b.5": .int(5), "b.kept": .string("original")]
            func verify(_ id: ConformanceCheck, _ detail: String, absent: [String] = []) {
                for key in absent {
                    let read = checker.attempt(id, "read", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(id, read ?? nil, nil, detail, key: key)
                }
                for (key, value) in expected {
                    let read = checker.attempt(id, "read", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(id, read ?? nil, value, detail, key: key)
                }
                checkKeys(provider, expected: expected, checker, id, "\(detail): keys()")
            }
            verify(.batchesOrder, "changes in a batch apply in order", absent: ["b.1", "b.6", "b.absent"])

            checker.attempt(.batchesEmpty, "apply an empty batch") { try provider.apply([]) }
            verify(.batchesEmpty, "an empty batch changes nothing")

            // A rejected batch leaves no trace: neither its sets nor its removals.
            let tooDeep = ConformanceValues.nested(depth: DefaultsValue.maximumNestingDepth + 1, leaf: .string(checker.secret))
            let fine = DefaultsValue.array([.int(1), .dictionary(["x": .string(checker.secret)])])
            // Each with its code and, for a rejected value, the key the error names: the offending change's.
            let rejected: [(String, [DefaultsChange], DefaultsError.Code, offending: String?)] = [
                ("an empty key last", [.set("b.new", fine), .set("b.kept", .string("changed")), .remove("b.2"), .set("", .int(0))], .invalidKey, nil),
                ("an empty key first", [.remove(""), .set("b.new", .int(1)), .remove("b.3")], .invalidKey, nil),
                ("an empty key in the middle", [.set("b.new", .int(1)), .remove("b.5"), .set("", fine), .set("b.other", .int(2)), .remove("b.kept")], .invalidKey, nil),
                ("a value nested too deeply last", [.set("b.new", .int(1)), .remove("b.5"), .set("b.deep", tooDeep)], .invalidValue, "b.deep"),
                ("a value nested too deeply first", [.set("b.deep", tooDeep), .remove("b.kept"), .set("b.new", fine)], .invalidValue, "b.deep"),
                ("a value nested too deeply in its last branch",
                    [.set("b.new", .int(1)), .set("b.deep", .array([.int(1), .string("x"), tooDeep])), .remove("b.3")], .invalidValue, "b.deep"),
                ("a value nested too deeply under one of several dictionary keys",
                    [.set("b.deep", .dictionary(["a": .int(1), "m": .array([]), "z": tooDeep, "b": .string("x")])), .set("b.kept", .string("changed"))], .invalidValue, "b.deep"),
            ]
            for (name, batch, code, offending) in rejected {
                let error = checker.expectError(.batchesRejected, code, "a batch with \(name) is rejected") { try provider.apply(batch) }
                if let offending, let error {
                    checker.check(
                        .batchesRejected, error.key == offending, "the error of a batch with \(name) names the rejected change's key", key: offending,
                        expected: ConformanceText.literal(offending), actual: error.key.map(ConformanceText.literal) ?? "no key")
                }
                verify(.batchesNoTrace, "a batch with \(name) leaves no trace", absent: ["b.new", "b.deep", "b.other"])
            }

            // Large batches whose sizes are not round numbers, and one that removes every other key.
            var total = 0
            for size in [1_001, 4_099, 10_007] {
                let batch = (0..<size).map { DefaultsChange.set("b.large.\(size).\($0)", .int(Int64($0))) }
                checker.attempt(.batchesLarge, "apply \(size) changes") { try provider.apply(batch) }
                total += size
                for index in [0, size / 2, size - 2, size - 1] {
                    expected["b.large.\(size).\(index)"] = .int(Int64(index))
                }
            }
            let count = checker.attempt(.batchesLarge, "keys() after large batches") { try provider.keys().filter { $0.hasPrefix("b.large.") }.count }
            checker.check(.batchesLarge, count == total, "large batches apply whole", expected: "\(total) keys", actual: "\(count.map(String.init) ?? "an error")")
            let thinning = (0..<10_007).map { $0 % 2 == 1 ? DefaultsChange.remove("b.large.10007.\($0)") : .set("b.large.10007.\($0)", .int(-Int64($0))) }
            checker.attempt(.batchesLarge, "apply 10 007 sets and removals") { try provider.apply(thinning) }
            for index in [0, 5_002, 10_005, 10_006] {
                expected["b.large.10007.\(index)"] = .int(-Int64(index))
            }
            var absent: [String] = []
            for index in [1, 5_003, 10_005] {
                expected["b.large.10007.\(index)"] = nil
                absent.append("b.large.10007.\(index)")
            }
            let after = checker.attempt(.batchesLarge, "keys() after a large mixed batch") { try provider.keys().filter { $0.hasPrefix("b.large.") }.count }
            checker.check(.batchesLarge, after == total - 5_003, "a large mixed batch applies whole", expected: "\(total - 5_003) keys", actual: "\(after.map(String.init) ?? "an error")")
            for (key, value) in expected where key.hasPrefix("b.large.") {
                let read = checker.attempt(.batchesLarge, "read", key: key) { try provider.value(forKey: key) }
                checker.expectValue(.batchesLarge, read ?? nil, value, "large batches apply whole", key: key)
            }
            for key in absent {
                let read = checker.attempt(.batchesLarge, "read", key: key) { try provider.value(forKey: key) }
                checker.expectValue(.batchesLarge, read ?? nil, nil, "a large batch's removals apply", key: key)
            }
            checker.attempt(.batchesLarge, "remove the large keys") {
                try provider.apply((0..<10_007).map { DefaultsChange.remove("b.large.10007.\($0)") }
                    + [1_001, 4_099].flatMap { size in (0..<size).map { DefaultsChange.remove("b.large.\(size).\($0)") } })
            }
            expected = expected.filter { !$0.key.hasPrefix("b.large.") }

            staleReadChecks(checker, provider, &expected)
            verify(.batchesNoStaleRead, "reads after batches")

            // Equivalent spellings within one batch are one key.
            checker.attempt(.batchesCanonicalKeys, "apply a batch with two spellings of a key") {
                try provider.apply([.set("bc.caf\u{E9}", .int(1)), .set("bc.cafe\u{301}", .int(2)), .set("bc.\u{C5}", .int(3)), .remove("bc.\u{212B}")])
            }
            expected["bc.caf\u{E9}"] = .int(2)
            verify(.batchesCanonicalKeys, "the last change to any spelling of a key wins", absent: ["bc.\u{C5}"])

            conditionalApplyChecks(checker, provider)
            asyncFormChecks(checker, provider)
        }
    }

    /// Reads made before a batch, a removal or `removeAll()` (a cache may hold them, absences
    /// included, under any spelling) are not served after it.
    func staleReadChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider, _ expected: inout [String: DefaultsValue]) {
        let keys = ["s.a", "s.b", "s.caf\u{E9}", "s.absent", "s.later"]
        checker.attempt(.batchesNoStaleRead, "seed") {
            try provider.apply([.set("s.a", .int(1)), .set("s.b", .int(2)), .set("s.caf\u{E9}", .int(3))])
        }
        for key in keys { _ = checker.attempt(.batchesNoStaleRead, "read before the batch", key: key) { try provider.value(forKey: key) } }
        checker.attempt(.batchesNoStaleRead, "apply a batch over the read keys") {
            try provider.apply([.set("s.a", .int(10)), .remove("s.b"), .set("s.cafe\u{301}", .int(30)), .set("s.absent", .int(40)), .set("s.later", .int(50)), .remove("s.later")])
        }
        let after: [(String, DefaultsValue?)] = [("s.a", .int(10)), ("s.b", nil), ("s.caf\u{E9}", .int(30)), ("s.absent", .int(40)), ("s.later", nil)]
        for (key, value) in after {
            let read = checker.attempt(.batchesNoStaleRead, "read after the batch", key: key) { try provider.value(forKey: key) }
            checker.expectValue(.batchesNoStaleRead, read ?? nil, value, "a read cached before a batch is not served after it", key: key)
        }
        for key in keys { _ = checker.attempt(.batchesNoStaleRead, "read before removeAll()", key: key) { try provider.value(forKey: key) } }
        let snapshot = expected
        checker.attempt(.batchesNoStaleRead, "removeAll()") { try provider.removeAll() }
        for key in keys + Array(snapshot.keys) {
            let read = checker.attempt(.batchesNoStaleRead, "read after removeAll()", key: key) { try provider.value(forKey: key) }
            checker.expectValue(.batchesNoStaleRead, read ?? nil, nil, "a read cached before removeAll() is not served after it", key: key)
        }
        // Put the earlier keys back in one batch, and check them through reads cached as absent.
        checker.attempt(.batchesNoStaleRead, "apply a batch over reads cached as absent") {
            try provider.apply(snapshot.map { .set($0.key, $0.value) })
        }
        expected = snapshot
    }
}
