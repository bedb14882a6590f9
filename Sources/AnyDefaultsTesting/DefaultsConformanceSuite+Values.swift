import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Every edge value of the value model reads back exactly: on the instance that wrote it,
    /// again after all the others were written, and through `allValues()`; and a key overwritten
    /// with a value of another type holds the new one.
    @discardableResult
    public func roundTrips() throws -> ConformanceReport {
        try group("roundTrips") { checker, _, provider in
            var written: [String: DefaultsValue] = [:]
            for (index, edge) in ConformanceValues.edgeCases.enumerated() {
                let key = "roundTrip.\(index)"
                guard checker.attempt("write \(edge.name)", key: key, { try provider.setValue(edge.value, forKey: key) }) != nil
                else { continue }
                written[key] = edge.value
                let read = checker.attempt("read \(edge.name)", key: key) { try provider.value(forKey: key) }
                checker.expectValue(read ?? nil, edge.value, "read back \(edge.name) at once", key: key)
            }
            for (index, edge) in ConformanceValues.edgeCases.enumerated() {
                let key = "roundTrip.\(index)"
                guard written[key] != nil else { continue }
                let read = checker.attempt("read \(edge.name) again", key: key) { try provider.value(forKey: key) }
                checker.expectValue(read ?? nil, edge.value, "read back \(edge.name) after all writes", key: key)
            }
            if let all = checker.attempt("allValues()", { try provider.allValues() }) {
                for (key, value) in written {
                    checker.expectValue(all[key], value, "allValues() holds the written value", key: key)
                }
                checker.check(
                    all.count == written.count, "allValues() holds exactly the written keys",
                    expected: "\(written.count) entries", actual: "\(all.count) entries")
            }

            let key = "roundTrip.overwrite"
            let sequence: [DefaultsValue] = [
                .int(42), .string("forty-two"), .data(.init([42])), .array([.int(42)]), .double(42), .bool(true),
                .dictionary(["n": .int(42)]), .date(.init(timeIntervalSinceReferenceDate: 42)), .int(-42),
            ]
            for value in sequence {
                checker.attempt("overwrite with \(value.typeName)", key: key) { try provider.setValue(value, forKey: key) }
                let read = checker.attempt("read after overwrite", key: key) { try provider.value(forKey: key) }
                checker.expectValue(read ?? nil, value, "overwrite with another type (\(value.typeName))", key: key)
            }
        }
    }

    /// Values that differ only in type stay apart: `.int(1)`, `.double(1)` and `.bool(true)` are
    /// three values, also inside arrays and dictionaries.
    @discardableResult
    public func typeFidelity() throws -> ConformanceReport {
        try group("typeFidelity") { checker, _, provider in
            let items = ConformanceValues.lookalikes
            for (index, item) in items.enumerated() {
                checker.attempt("write \(item.name)", key: "type.\(index)") { try provider.setValue(item.value, forKey: "type.\(index)") }
            }
            for (index, item) in items.enumerated() {
                let read = checker.attempt("read \(item.name)", key: "type.\(index)") { try provider.value(forKey: "type.\(index)") }
                checker.expectValue(read ?? nil, item.value, "\(item.name) keeps its type", key: "type.\(index)")
            }
            // The same key holding each look-alike in turn.
            for item in items {
                checker.attempt("overwrite with \(item.name)", key: "type.same") { try provider.setValue(item.value, forKey: "type.same") }
                let read = checker.attempt("read \(item.name)", key: "type.same") { try provider.value(forKey: "type.same") }
                checker.expectValue(read ?? nil, item.value, "\(item.name) replaces a look-alike of another type", key: "type.same")
            }
        }
    }
}
