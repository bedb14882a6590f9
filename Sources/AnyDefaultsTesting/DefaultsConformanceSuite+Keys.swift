import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Key semantics: a new store has no keys; unusual keys (prefixes of each other, case, white
    /// space, NUL, wildcards, Unicode, 1 KiB of UTF-8) are stored as given; canonically equivalent
    /// spellings are one key; `keys()` is exactly the stored set.
    @discardableResult
    public func keys() throws -> ConformanceReport {
        try group("keys") { checker, _, provider in
            let initial = checker.attempt("keys() of a new store") { try provider.keys() }
            checker.check(initial?.isEmpty ?? false, "a new store has no keys", expected: "[]", actual: "\(initial ?? [])")

            var expected: [String: DefaultsValue] = [:]
            for (index, item) in ConformanceValues.keys.enumerated() {
                let value = DefaultsValue.int(Int64(index))
                if checker.attempt("write key (\(item.name))", key: item.key, { try provider.setValue(value, forKey: item.key) }) != nil {
                    expected[item.key] = value
                }
            }
            for (index, item) in ConformanceValues.keys.enumerated() {
                let read = checker.attempt("read key (\(item.name))", key: item.key) { try provider.value(forKey: item.key) }
                checker.expectValue(read ?? nil, .int(Int64(index)), "key (\(item.name)) holds its own value", key: item.key)
            }
            checkKeys(provider, expected: Set(expected.keys), checker, "keys() lists exactly the stored keys")

            // Canonical equivalence: é as one scalar and as e + combining accent are one key.
            let composed = "caf\u{E9}.setting"
            let decomposed = "cafe\u{301}.setting"
            checker.attempt("write composed key", key: composed) { try provider.setValue(.string("composed"), forKey: composed) }
            let viaDecomposed = checker.attempt("read decomposed key", key: decomposed) { try provider.value(forKey: decomposed) }
            checker.expectValue(viaDecomposed ?? nil, .string("composed"), "a canonically equivalent key reads the same entry", key: decomposed)
            checker.attempt("write decomposed key", key: decomposed) { try provider.setValue(.string("decomposed"), forKey: decomposed) }
            let viaComposed = checker.attempt("read composed key", key: composed) { try provider.value(forKey: composed) }
            checker.expectValue(viaComposed ?? nil, .string("decomposed"), "a canonically equivalent key overwrites the same entry", key: composed)
            expected[composed] = .string("decomposed")
            checkKeys(provider, expected: Set(expected.keys), checker, "canonically equivalent keys appear once in keys()")

            // Overwrites do not duplicate keys.
            checker.attempt("overwrite", key: "a") { try provider.setValue(.string("again"), forKey: "a") }
            checkKeys(provider, expected: Set(expected.keys), checker, "an overwritten key appears once in keys()")
        }
    }

    /// Compares `keys()` with `expected`, also counting duplicates.
    func checkKeys(_ provider: any DefaultsProvider, expected: Set<String>, _ checker: ConformanceChecker, _ check: String) {
        guard let keys = checker.attempt("keys()", { try provider.keys() }) else { return }
        let found = Set(keys)
        let missing = expected.subtracting(found)
        let extra = found.subtracting(expected)
        checker.check(
            missing.isEmpty && extra.isEmpty && keys.count == found.count, check,
            expected: "\(expected.count) distinct keys",
            actual: "\(keys.count) keys (\(found.count) distinct); missing \(missing.map { String($0.prefix(40)) }.sorted()); extra \(extra.map { String($0.prefix(40)) }.sorted())")
    }
}
