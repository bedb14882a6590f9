import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Batches: changes apply in order (the last change to a key wins); an empty batch changes
    /// nothing; a batch with an invalid key or value anywhere is rejected with a `DefaultsError`
    /// and leaves no trace; a large batch applies whole.
    @discardableResult
    public func batches() throws -> ConformanceReport {
        try group("batches") { checker, _, provider in
            checker.attempt("seed", key: "b.kept") { try provider.setValue(.string("original"), forKey: "b.kept") }
            checker.attempt("apply a mixed batch") {
                try provider.apply([
                    .set("b.1", .int(1)), .set("b.2", .int(2)), .remove("b.1"), .set("b.3", .int(3)),
                    .set("b.2", .int(4)), .remove("b.absent"), .remove("b.5"), .set("b.5", .int(5)),
                ])
            }
            let expectations: [(String, DefaultsValue?)] = [
                ("b.1", nil), ("b.2", .int(4)), ("b.3", .int(3)), ("b.5", .int(5)), ("b.kept", .string("original")),
            ]
            for (key, value) in expectations {
                let read = checker.attempt("read after the batch", key: key) { try provider.value(forKey: key) }
                checker.expectValue(read ?? nil, value, "changes in a batch apply in order", key: key)
            }
            checker.attempt("apply an empty batch") { try provider.apply([]) }
            checkKeys(provider, expected: ["b.2", "b.3", "b.5", "b.kept"], checker, "an empty batch changes nothing")

            // A rejected batch leaves no trace: neither its sets nor its removals.
            let tooDeep = ConformanceValues.nested(depth: DefaultsValue.maximumNestingDepth + 1)
            let rejected: [(String, [DefaultsChange], DefaultsError.Code)] = [
                ("an empty key last", [.set("b.new", .int(1)), .set("b.kept", .string("changed")), .remove("b.2"), .set("", .int(0))], .invalidKey),
                ("an empty key first", [.remove(""), .set("b.new", .int(1)), .remove("b.3")], .invalidKey),
                ("a value nested too deeply", [.set("b.new", .int(1)), .remove("b.5"), .set("b.deep", tooDeep)], .invalidValue),
            ]
            for (name, batch, code) in rejected {
                checker.expectError(code, "a batch with \(name) is rejected") { try provider.apply(batch) }
                for (key, value) in expectations {
                    let read = checker.attempt("read after a rejected batch", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(read ?? nil, value, "a batch with \(name) leaves no trace", key: key)
                }
                checkKeys(provider, expected: ["b.2", "b.3", "b.5", "b.kept"], checker, "a batch with \(name) adds no key")
            }

            let large = (0..<1000).map { DefaultsChange.set("b.large.\($0)", .int(Int64($0))) }
            checker.attempt("apply 1000 changes") { try provider.apply(large) }
            let count = checker.attempt("keys() after a large batch") { try provider.keys().filter { $0.hasPrefix("b.large.") }.count }
            checker.check(count == 1000, "a large batch applies whole", expected: "1000 keys", actual: "\(count.map(String.init) ?? "an error")")
            let last = checker.attempt("read", key: "b.large.999") { try provider.value(forKey: "b.large.999") }
            checker.expectValue(last ?? nil, .int(999), "a large batch applies whole", key: "b.large.999")
        }
    }
}
