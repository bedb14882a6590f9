import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Persistence (for providers that claim ``DefaultsCapabilities/persistent``): what one
    /// instance wrote, removed and batched is there after it is released and the storage is opened
    /// again; and two instances open at once on the same storage read each other's writes and
    /// removals.
    @discardableResult
    public func persistence() throws -> ConformanceReport {
        try groupOnStorage("persistence", requires: .persistent) { checker, storage in
            let values = ConformanceValues.scalars + ConformanceValues.strings + ConformanceValues.dates
                + ConformanceValues.containers
            var expected: [String: DefaultsValue] = [:]
            do {
                guard let provider = reopen(storage, checker, "open the provider") else { return }
                for (index, edge) in values.enumerated() {
                    let key = "p.\(index)"
                    if checker.attempt("write \(edge.name)", key: key, { try provider.setValue(edge.value, forKey: key) }) != nil {
                        expected[key] = edge.value
                    }
                }
                checker.attempt("apply a batch") { try provider.apply([.set("p.batch.a", .int(1)), .set("p.batch.b", .int(2)), .remove("p.0")]) }
                expected["p.batch.a"] = .int(1)
                expected["p.batch.b"] = .int(2)
                expected["p.0"] = nil
            }
            // The first instance is released at the end of the scope above, before reopening.
            guard let reopened = reopen(storage, checker, "reopen the storage") else { return }
            for (key, value) in expected {
                let read = checker.attempt("read after reopening", key: key) { try reopened.value(forKey: key) }
                checker.expectValue(read ?? nil, value, "a value survives reopening", key: key)
            }
            let removed = checker.attempt("read a removed key after reopening", key: "p.0") { try reopened.value(forKey: "p.0") }
            checker.expectValue(removed ?? nil, nil, "a removal survives reopening", key: "p.0")
            checkKeys(reopened, expected: Set(expected.keys), checker, "keys() survive reopening")

            // Two instances at once.
            guard let second = reopen(storage, checker, "open a second instance") else { return }
            checker.attempt("write through the first", key: "p.shared") { try reopened.setValue(.string("from first"), forKey: "p.shared") }
            let seen = checker.attempt("read through the second", key: "p.shared") { try second.value(forKey: "p.shared") }
            checker.expectValue(seen ?? nil, .string("from first"), "a second open instance reads the first one's write", key: "p.shared")
            checker.attempt("write through the second", key: "p.shared") { try second.setValue(.int(2), forKey: "p.shared") }
            let back = checker.attempt("read through the first", key: "p.shared") { try reopened.value(forKey: "p.shared") }
            checker.expectValue(back ?? nil, .int(2), "the first instance reads the second one's write", key: "p.shared")
            checker.attempt("remove through the second", key: "p.shared") { try second.removeValue(forKey: "p.shared") }
            let gone = checker.attempt("read through the first", key: "p.shared") { try reopened.value(forKey: "p.shared") }
            checker.expectValue(gone ?? nil, nil, "the first instance sees the second one's removal", key: "p.shared")
            checker.attempt("removeAll() through the second") { try second.removeAll() }
            checkKeys(reopened, expected: [], checker, "the first instance sees the second one's removeAll()")
        }
    }
}
