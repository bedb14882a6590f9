import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Removal: a removed key reads as absent and leaves `keys()`; removing an absent key, twice,
    /// or everything from an empty store is no error; a key's prefix and extensions survive its
    /// removal; removing a key with wildcards removes only it; a canonically equivalent spelling
    /// removes the key; `allValues()` is exact afterwards; removing only what is present or
    /// unchanged removes exactly that; `removeAll()` empties the store and the store works
    /// afterwards.
    func removalChecks() throws -> ConformanceReport {
        try group(.removal) { checker, _, provider in
            var expected: [String: DefaultsValue] = [:]
            func write(_ id: ConformanceCheck, _ keys: [String]) {
                for key in keys {
                    let value = DefaultsValue.string("value of \(key)")
                    if checker.attempt(id, "write", key: key, { try provider.setValue(value, forKey: key) }) != nil { expected[key] = value }
                }
            }
            func remove(_ id: ConformanceCheck, _ key: String, removing removed: String? = nil) {
                checker.attempt(id, "remove", key: key) { try provider.removeValue(forKey: key) }
                expected[removed ?? key] = nil
            }
            /// Every expected key holds its value, every removed one is absent, keys() is exact.
            func verify(_ id: ConformanceCheck, _ detail: String, removed: [String]) {
                for key in removed {
                    let read = checker.attempt(id, "read a removed key", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(id, read ?? nil, nil, "\(detail): the removed key reads as absent", key: key)
                }
                for (key, value) in expected {
                    let read = checker.attempt(id, "read a kept key", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(id, read ?? nil, value, "\(detail): other keys keep their values", key: key)
                }
                checkKeys(provider, expected: expected, checker, id, "\(detail): keys() is exactly what remains")
            }

            write(.removalNeighbours, ["r", "r.a", "r.ab", "rr", "r.a.b", "R.a", "r.a ", "r.ключ", "r.caf\u{E9}"])
            remove(.removalRemoved, "r.a")
            verify(.removalNeighbours, "removing a key leaves keys that share its prefix", removed: ["r.a"])

            remove(.removalAbsent, "r.a")
            remove(.removalAbsent, "never.written")
            verify(.removalAbsent, "removing absent keys changes nothing", removed: ["r.a", "never.written"])

            // Wildcards of SQL LIKE and GLOB, regular expressions and shells: each removal must
            // remove exactly its own key.
            let wildcards = ["w.%", "w._", "w.*", "w.?", "w.[ab]", "w.a", "w.b", "w.ab", "w.x", "w.%%", "w.\\%", "w.^", "w.$", "w..", "w.(a|b)", "w.{a,b}", "w.~"]
            write(.removalWildcards, wildcards)
            for key in ["w.%", "w._", "w.*", "w.?", "w.[ab]", "w.(a|b)", "w..", "w.{a,b}"] {
                remove(.removalWildcards, key)
                verify(.removalWildcards, "removing \(ConformanceText.key(key)) removes only that key", removed: [key])
            }

            // Removing through a canonically equivalent spelling.
            write(.removalCanonical, ["rc.caf\u{E9}", "rc.\u{C5}"])
            remove(.removalCanonical, "rc.cafe\u{301}", removing: "rc.caf\u{E9}")
            remove(.removalCanonical, "rc.\u{212B}", removing: "rc.\u{C5}")
            verify(.removalCanonical, "removing a canonically equivalent spelling removes the key", removed: ["rc.caf\u{E9}", "rc.\u{C5}"])

            conditionalRemovalChecks(checker, provider)

            if let all = checker.attempt(.removalAllValuesExact, "allValues() after removals", { try provider.allValues() }) {
                for (key, value) in expected {
                    checker.expectValue(.removalAllValuesExact, all[key], value, "allValues() after removals holds each remaining key", key: key)
                }
                checker.check(
                    .removalAllValuesExact, keysMatch(Array(all.keys), Set(expected.keys)), "allValues() after removals holds no removed key",
                    expected: "\(expected.count) entries", actual: keyListProblems(Array(all.keys), Set(expected.keys)))
            }

            checker.attempt(.removalRemoveAll, "removeAll()") { try provider.removeAll() }
            let removed = Array(expected.keys)
            expected = [:]
            verify(.removalRemoveAll, "removeAll() removes every value", removed: removed)
            if let all = checker.attempt(.removalAllValuesExact, "allValues() after removeAll()", { try provider.allValues() }) {
                checker.check(.removalAllValuesExact, all.isEmpty, "allValues() after removeAll() is empty", expected: "[:]", actual: ConformanceText.keys(all.keys))
            }
            checker.attempt(.removalRemoveAll, "removeAll() on an empty store") { try provider.removeAll() }

            write(.removalRemoveAll, ["r", "rr"])
            verify(.removalRemoveAll, "the store works after removeAll()", removed: [])
        }
    }
}
