import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Key semantics: a new store has no keys; unusual keys are stored as given; canonically
    /// equivalent spellings are one key, while keys that are only compatibility-equivalent, differ
    /// by case, accent, escaping, surrounding white space or a NUL stay distinct; keys of 16 KiB
    /// and more work or are rejected clearly; generated keys each hold their own value; `keys()`
    /// is exactly the stored set.
    func keyChecks() throws -> ConformanceReport {
        try group(.keys) { checker, _, provider in
            let initial = checker.attempt(.keysNewStoreEmpty, "keys() of a new store") { try provider.keys() }
            checker.check(.keysNewStoreEmpty, initial?.isEmpty ?? false, "a new store has no keys", expected: "[]", actual: ConformanceText.keys(initial ?? []))

            var expected: [String: DefaultsValue] = [:]
            var counter: Int64 = 0
            /// Writes a distinct value under each key of `keys`, then reads each back.
            func writeDistinct(_ id: ConformanceCheck, _ name: String, _ keys: [String]) {
                var values: [(String, DefaultsValue)] = []
                for key in keys {
                    counter += 1
                    let value = DefaultsValue.int(counter)
                    if checker.attempt(id, "write key (\(name))", key: key, { try provider.setValue(value, forKey: key) }) != nil {
                        expected[key] = value
                        values.append((key, value))
                    }
                }
                for (key, value) in values {
                    let read = checker.attempt(id, "read key (\(name))", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(id, read ?? nil, value, "key (\(name)) holds its own value", key: key)
                }
            }

            for item in ConformanceValues.keys { writeDistinct(.keysUnusual, item.name, [item.key]) }
            for set in ConformanceValues.distinctKeys { writeDistinct(set.id, set.name, set.keys) }
            checkKeys(provider, expected: expected, checker, .keysListExact, "keys() lists exactly the stored keys")

            // Canonically equivalent spellings: one key, read and overwritten through any of them.
            for (index, spellings) in ConformanceValues.canonicalKeys.enumerated() {
                let keys = spellings.map { "canon.\(index).\($0)" }
                counter += 1
                let first = DefaultsValue.int(counter)
                checker.attempt(.keysCanonicalSame, "write one spelling", key: keys[0]) { try provider.setValue(first, forKey: keys[0]) }
                for key in keys.dropFirst() {
                    let read = checker.attempt(.keysCanonicalSame, "read another spelling", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(.keysCanonicalSame, read ?? nil, first, "a canonically equivalent spelling reads the same entry", key: key)
                }
                counter += 1
                let last = DefaultsValue.int(counter)
                checker.attempt(.keysCanonicalSame, "overwrite through the last spelling", key: keys[keys.count - 1]) {
                    try provider.setValue(last, forKey: keys[keys.count - 1])
                }
                let read = checker.attempt(.keysCanonicalSame, "read the first spelling", key: keys[0]) { try provider.value(forKey: keys[0]) }
                checker.expectValue(.keysCanonicalSame, read ?? nil, last, "a canonically equivalent spelling overwrites the same entry", key: keys[0])
                expected[keys[0]] = last
            }
            checkKeys(provider, expected: expected, checker, .keysCanonicalSame, "canonically equivalent keys appear once in keys()")

            // Generated keys.
            var generator = ConformanceGenerator(seed: options.seed, stream: "keys")
            var generated: [String: DefaultsValue] = [:]
            for _ in 0..<options.stress.generated {
                let key = "gen." + generator.key()
                counter += 1
                let value = DefaultsValue.int(counter)
                if checker.attempt(.keysGenerated, "write a generated key", key: key, { try provider.setValue(value, forKey: key) }) != nil {
                    generated[key] = value
                }
            }
            for (key, value) in generated {
                let read = checker.attempt(.keysGenerated, "read a generated key", key: key) { try provider.value(forKey: key) }
                checker.expectValue(.keysGenerated, read ?? nil, value, "a generated key holds its own value", key: key)
            }
            expected.merge(generated) { $1 }
            checkKeys(provider, expected: expected, checker, .keysGenerated, "keys() lists exactly the generated keys too")

            longKeyChecks(checker, provider, &expected)

            // Overwrites do not duplicate keys.
            for key in ["a", "clé_ñ_ü", "caf\u{E9}.setting"] where expected[key] != nil {
                checker.attempt(.keysListExact, "overwrite", key: key) { try provider.setValue(.string("again"), forKey: key) }
                expected[key] = .string("again")
            }
            checkKeys(provider, expected: expected, checker, .keysListExact, "an overwritten key appears once in keys()")
        }
    }

    /// Keys of 16 KiB and more: each works exactly (read back, listed once, distinct from a key
    /// that differs only in its last character, removable) or is rejected with `invalidKey`.
    func longKeyChecks(_ checker: ConformanceChecker, _ provider: any DefaultsProvider, _ expected: inout [String: DefaultsValue]) {
        let long = String(repeating: "k", count: 16 * 1024)
        let candidates: [(name: String, key: String)] = [
            ("16 KiB ASCII", "long." + long),
            ("16 KiB ASCII, last character differs", "long." + long.dropLast() + "j"),
            ("16 KiB of 3-byte characters", "long." + String(repeating: "€", count: 5_462)),
            ("16 KiB of emoji", "long." + String(repeating: "🔑", count: 4_097)),
            ("64 KiB ASCII", "long." + String(repeating: long, count: 4)),
        ]
        var accepted: [(name: String, key: String, value: DefaultsValue)] = []
        var rejected: [(name: String, key: String)] = []
        for (index, candidate) in candidates.enumerated() {
            let value = DefaultsValue.string("\(checker.secret) long key \(index)")
            do {
                try provider.setValue(value, forKey: candidate.key)
                accepted.append((candidate.name, candidate.key, value))
            } catch {
                if error.code == .invalidKey { rejected.append(candidate) }
                checker.inspect(error, during: "writing under a long key", key: candidate.key)
                checker.check(
                    .keysLong, error.code == .invalidKey && !error.message.isEmpty, "a key of \(candidate.name) works or is rejected clearly",
                    key: candidate.key, expected: "success, or a DefaultsError with code invalidKey and a message",
                    actual: "code \(error.code), message \(ConformanceText.literal(error.message))")
            }
        }
        // A key too long to store is one that holds nothing: a read finds nothing, a removal has
        // nothing to do (or both reject it as a write does), never another failure.
        for item in rejected {
            do throws(DefaultsError) {
                let read = try provider.value(forKey: item.key)
                checker.expectValue(.keysLong, read, nil, "a rejected key of \(item.name) reads as absent", key: item.key)
            } catch {
                checker.inspect(error, during: "reading under a rejected long key", key: item.key)
                checker.check(
                    .keysLong, error.code == .invalidKey, "a read under a rejected key of \(item.name) finds nothing or is rejected clearly", key: item.key,
                    expected: "nil, or a DefaultsError with code invalidKey", actual: "code \(error.code), message \(ConformanceText.literal(error.message))")
            }
            do throws(DefaultsError) {
                try provider.removeValue(forKey: item.key)
            } catch {
                checker.inspect(error, during: "removing a rejected long key", key: item.key)
                checker.check(
                    .keysLong, error.code == .invalidKey, "removing a rejected key of \(item.name) succeeds or is rejected clearly", key: item.key,
                    expected: "success, or a DefaultsError with code invalidKey", actual: "code \(error.code), message \(ConformanceText.literal(error.message))")
            }
        }
        for item in accepted {
            let read = checker.attempt(.keysLong, "read under \(item.name)", key: item.key) { try provider.value(forKey: item.key) }
            checker.expectValue(.keysLong, read ?? nil, item.value, "a key of \(item.name) holds its own value", key: item.key)
            expected[item.key] = item.value
        }
        checkKeys(provider, expected: expected, checker, .keysLong, "long keys appear exactly, each once, in keys()")
        for item in accepted {
            checker.attempt(.keysLong, "remove under \(item.name)", key: item.key) { try provider.removeValue(forKey: item.key) }
            let read = checker.attempt(.keysLong, "read a removed long key", key: item.key) { try provider.value(forKey: item.key) }
            checker.expectValue(.keysLong, read ?? nil, nil, "a key of \(item.name) can be removed", key: item.key)
            expected[item.key] = nil
        }
    }

    /// Compares `keys()` with the keys of `expected` (canonical equivalence), naming what is
    /// missing, extra, or listed twice (a duplicate, in any spelling).
    func checkKeys(_ provider: any DefaultsProvider, expected: [String: DefaultsValue], _ checker: ConformanceChecker, _ id: ConformanceCheck, _ detail: String) {
        checkKeys(provider, expected: Set(expected.keys), checker, id, detail)
    }

    func checkKeys(_ provider: any DefaultsProvider, expected: Set<String>, _ checker: ConformanceChecker, _ id: ConformanceCheck, _ detail: String) {
        guard let keys = checker.attempt(id, "keys()", { try provider.keys() }) else { return }
        checker.check(id, keysMatch(keys, expected), detail, expected: "\(expected.count) distinct keys", actual: keyListProblems(keys, expected))
    }

    /// Whether `keys` lists exactly `expected`, each key once (spellings compared by canonical equivalence).
    func keysMatch(_ keys: [String], _ expected: Set<String>) -> Bool {
        Set(keys) == expected && Set(keys).count == keys.count
    }

    /// What is wrong with `keys` compared with `expected`: missing, extra and duplicate keys.
    func keyListProblems(_ keys: [String], _ expected: Set<String>) -> String {
        let found = Set(keys)
        let duplicates = Dictionary(grouping: keys) { $0 }.values.filter { $0.count > 1 }
        var parts = ["\(keys.count) keys (\(found.count) distinct)"]
        let missing = expected.subtracting(found)
        let extra = found.subtracting(expected)
        if !missing.isEmpty { parts.append("missing \(ConformanceText.keys(missing))") }
        if !extra.isEmpty { parts.append("extra \(ConformanceText.keys(extra))") }
        for spellings in duplicates.prefix(3) {
            parts.append("\(ConformanceText.key(spellings[0])) listed \(spellings.count) times (as \(spellings.map(ConformanceText.key).joined(separator: ", ")))")
        }
        return parts.joined(separator: "; ")
    }
}
