import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Removal: a removed key reads as absent and leaves `keys()`; removing an absent key, twice,
    /// or everything from an empty store is no error; a key's prefix and extensions survive its
    /// removal; `removeAll()` empties the store and the store works afterwards.
    @discardableResult
    public func removal() throws -> ConformanceReport {
        try group("removal") { checker, _, provider in
            for key in ["r", "r.a", "r.ab", "rr"] {
                checker.attempt("write", key: key) { try provider.setValue(.string(key), forKey: key) }
            }
            checker.attempt("remove a present key", key: "r.a") { try provider.removeValue(forKey: "r.a") }
            let removed = checker.attempt("read a removed key", key: "r.a") { try provider.value(forKey: "r.a") }
            checker.expectValue(removed ?? nil, nil, "a removed key reads as absent", key: "r.a")
            for key in ["r", "r.ab", "rr"] {
                let read = checker.attempt("read a neighbour", key: key) { try provider.value(forKey: key) }
                checker.expectValue(read ?? nil, .string(key), "removing a key leaves keys that share its prefix", key: key)
            }
            checkKeys(provider, expected: ["r", "r.ab", "rr"], checker, "a removed key leaves keys()")

            checker.attempt("remove the same key again", key: "r.a") { try provider.removeValue(forKey: "r.a") }
            checker.attempt("remove a key never written", key: "never.written") { try provider.removeValue(forKey: "never.written") }
            checkKeys(provider, expected: ["r", "r.ab", "rr"], checker, "removing absent keys changes nothing")

            checker.attempt("removeAll()") { try provider.removeAll() }
            checkKeys(provider, expected: [], checker, "removeAll() leaves no key")
            for key in ["r", "r.ab", "rr"] {
                let read = checker.attempt("read after removeAll()", key: key) { try provider.value(forKey: key) }
                checker.expectValue(read ?? nil, nil, "removeAll() removes every value", key: key)
            }
            checker.attempt("removeAll() on an empty store") { try provider.removeAll() }

            checker.attempt("write after removeAll()", key: "r") { try provider.setValue(.int(1), forKey: "r") }
            let read = checker.attempt("read after removeAll()", key: "r") { try provider.value(forKey: "r") }
            checker.expectValue(read ?? nil, .int(1), "the store works after removeAll()", key: "r")
        }
    }
}
