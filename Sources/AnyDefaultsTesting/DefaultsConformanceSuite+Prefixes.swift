import AnyDefaultsCore
import Foundation

extension DefaultsConformanceSuite {
    /// The keys that make a prefix query go wrong if it is not exact: wildcards of SQL, glob and
    /// regular expressions, NFC and NFD spellings, partial graphemes, the highest scalars, NUL,
    /// keys that differ only by ASCII case (SQL's `LIKE` folds it), long keys that share more than
    /// LMDB's 256 prefix bytes, and keys longer than LMDB's 511-byte direct keys (a range over
    /// direct keys only misses them).
    static let prefixKeys: [String] = {
        let long = String(repeating: "L", count: 300)
        return [
            "p", "p/", "p/a", "p/a/b", "p/ab", "p0", "pa", "P/a", "Pa", "q", "p%a", "p_a", "p*a", "p?a", "p[a]", "p\\a", "%", "_",
            "caf\u{E9}/1", "cafe\u{301}/2", "cafe/3", "x", "x\u{301}", "xy", "\u{1F1EB}\u{1F1F7}", "\u{1F1EB}1",
            "\u{10FFFF}", "\u{10FFFF}\u{10FFFF}z", "\u{FFFF}", "nul\u{0}key", "nul", "日本/設定", "日本語",
            long + "/one", long + "/two", long + "x", long + long + "/deep", long + long + "/deeper",
        ]
    }()

    /// The prefixes the check asks for: empty, whole keys, either ASCII case, non-ASCII, NFD,
    /// wildcards, high scalars, a partial grapheme, prefixes longer than LMDB's direct and
    /// derived keys.
    static let prefixQueries: [String] = [
        "", "p", "P", "p/", "p/a", "P/", "p/a/b", "p/a/b/c", "p%", "p_", "p*", "p?", "p[", "%", "_", "*", "?", "[",
        "caf\u{E9}", "cafe\u{301}", "cafe", "x", "x\u{301}", "\u{1F1EB}", "\u{10FFFF}", "\u{FFFF}", "nul\u{0}", "日本",
        String(repeating: "L", count: 100), String(repeating: "L", count: 300), String(repeating: "L", count: 300) + "/",
        String(repeating: "L", count: 600), String(repeating: "L", count: 600) + "/deep", "zz",
    ]

    /// Prefix queries: ``DefaultsProvider/keys(withPrefix:)`` lists exactly the stored keys under
    /// each prefix (as ``DefaultsKeyPrefix`` defines it: canonical forms compared byte by byte),
    /// sorted by their UTF-8 bytes, and ``DefaultsProvider/allValues(withPrefix:)`` holds exactly
    /// their values; after overwrites and removals too. Edge prefixes: empty, a whole key, either
    /// ASCII case, non-ASCII, NFD, the wildcards `%`, `_`, `*`, `?`, `[`, the highest scalars, a
    /// partial grapheme, long prefixes.
    func prefixQueryChecks() throws -> ConformanceReport {
        try group(.prefixQueries) { checker, _, provider in
            var stored: [String: DefaultsValue] = [:]
            for (index, key) in Self.prefixKeys.enumerated() {
                let value = DefaultsValue.int(Int64(index))
                if checker.attempt(.prefixQueriesKeys, "write", key: key, { try provider.setValue(value, forKey: key) }) != nil {
                    stored[key.precomposedStringWithCanonicalMapping] = value
                }
            }
            checkPrefixQueries(provider, stored, checker)
            // New values under the same keys: a result kept while the key set is unchanged is stale.
            let overwrites = stored.keys.sorted().enumerated().map { DefaultsChange.set($1, .string("overwritten \($0)")) }
            if checker.attempt(.prefixQueriesValues, "overwrite every key", { try provider.apply(overwrites) }) != nil {
                for change in overwrites { stored[change.key] = change.value }
            }
            checkPrefixQueries(provider, stored, checker, after: " after overwrites")
            for key in ["p/a", "cafe\u{301}/2", String(repeating: "L", count: 300) + "/one"] {
                checker.attempt(.prefixQueriesKeys, "remove", key: key) { try provider.removeValue(forKey: key) }
                stored[key.precomposedStringWithCanonicalMapping] = nil
            }
            checkPrefixQueries(provider, stored, checker, after: " after removals")
        }
    }

    private func checkPrefixQueries(
        _ provider: any DefaultsProvider, _ stored: [String: DefaultsValue], _ checker: ConformanceChecker, after: String = ""
    ) {
        for prefix in Self.prefixQueries {
            let canonical = Array(prefix.precomposedStringWithCanonicalMapping.unicodeScalars)
            let under = stored.filter { Array($0.key.unicodeScalars).starts(with: canonical) }
            let expected = under.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            let shown = String(prefix.prefix(20)).debugDescription
            if let keys = checker.attempt(.prefixQueriesKeys, "keys(withPrefix: \(shown))", { try provider.keys(withPrefix: prefix) }) {
                checker.check(
                    .prefixQueriesKeys, keys == expected, "keys(withPrefix:) lists exactly the keys under the prefix, sorted by UTF-8 bytes\(after)", key: prefix,
                    expected: describeKeys(expected), actual: describeKeys(keys))
            }
            if let values = checker.attempt(.prefixQueriesValues, "allValues(withPrefix: \(shown))", { try provider.allValues(withPrefix: prefix) }) {
                checker.check(
                    .prefixQueriesValues, values == under, "allValues(withPrefix:) holds exactly the values under the prefix\(after)", key: prefix,
                    expected: describeKeys(expected), actual: describeKeys(values.keys.sorted()))
            }
        }
    }

    private func describeKeys(_ keys: [String]) -> String {
        "\(keys.count) keys: " + keys.prefix(8).map { String($0.prefix(24)).debugDescription }.joined(separator: ", ")
            + (keys.count > 8 ? ", …" : "")
    }
}
