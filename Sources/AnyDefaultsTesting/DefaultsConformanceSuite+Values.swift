import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Every edge value of the value model reads back exactly — at top level, nested in
    /// containers, looking like a codec's tags, large, and generated from the seed — on the
    /// instance that wrote it, again after all the others were written, and through
    /// `allValues()`; strings keep their Unicode scalars; a key overwritten with a value of
    /// another type holds the new one.
    func roundTripChecks() throws -> ConformanceReport {
        try group(.roundTrips) { checker, _, provider in
            var written: [(key: String, name: String, id: ConformanceCheck, value: DefaultsValue)] = []
            func write(_ id: ConformanceCheck, _ prefix: String, _ items: [(name: String, value: DefaultsValue)]) {
                for (index, item) in items.enumerated() {
                    let key = "rt.\(prefix).\(index)"
                    guard checker.attempt(id, "write \(item.name)", key: key, { try provider.setValue(item.value, forKey: key) }) != nil
                    else { continue }
                    written.append((key, item.name, id, item.value))
                    let read = checker.attempt(id, "read \(item.name)", key: key) { try provider.value(forKey: key) }
                    checker.expectValue(id, read ?? nil, item.value, "read back \(item.name) at once", key: key)
                }
            }
            var generator = ConformanceGenerator(seed: options.seed, stream: "roundTrips")
            let generated = (0..<options.stress.generated).map { index in (name: "generated value \(index)", value: generator.value(depth: 4)) }

            write(.roundTripsScalar, "s", ConformanceValues.scalars + ConformanceValues.dates + ConformanceValues.containers)
            write(.roundTripsString, "t", ConformanceValues.strings + ConformanceValues.exactStrings)
            write(.roundTripsNested, "n", ConformanceValues.nestedExtremes)
            write(.roundTripsTagLike, "g", ConformanceValues.tagLike)
            write(.roundTripsGenerated, "r", generated)
            let key = "rt.overwrite"
            let sequence: [DefaultsValue] = [
                .int(42), .string("forty-two"), .data(.init([42])), .array([.int(42)]), .double(42), .bool(true),
                .dictionary(["n": .int(42)]), .date(.init(timeIntervalSinceReferenceDate: 42)), .int(-42), .string(""), .array([]),
                .dictionary([:]),
                // Equal under String's ==, other scalars: a write, not a no-op.
                .array([.string("cafe\u{301}")]), .array([.string("caf\u{E9}")]), .dictionary(["cafe\u{301}": .int(1)]), .dictionary(["caf\u{E9}": .int(1)]),
                .data(.init()),
            ]
            for value in sequence {
                checker.attempt(.roundTripsOverwriteType, "overwrite with \(value.typeName)", key: key) { try provider.setValue(value, forKey: key) }
                let read = checker.attempt(.roundTripsOverwriteType, "read after overwrite", key: key) { try provider.value(forKey: key) }
                checker.expectValue(.roundTripsOverwriteType, read ?? nil, value, "overwrite with another type (\(value.typeName))", key: key)
            }
            if let last = sequence.last { written.append((key, "the overwritten key", .roundTripsOverwriteType, last)) }
            // Large values last: a provider that rewrites its whole store on every write pays for
            // them only a few times.
            write(.roundTripsLarge, "l", ConformanceValues.large + ConformanceValues.largeContainers)

            for item in written {
                let read = checker.attempt(.roundTripsAfterOthers, "read \(item.name) again", key: item.key) { try provider.value(forKey: item.key) }
                checker.expectValue(.roundTripsAfterOthers, read ?? nil, item.value, "read back \(item.name) after all writes", key: item.key)
            }
            if let all = checker.attempt(.roundTripsAllValues, "allValues()", { try provider.allValues() }) {
                for item in written {
                    checker.expectValue(.roundTripsAllValues, all[item.key], item.value, "allValues() holds \(item.name)", key: item.key)
                }
                let extra = all.keys.filter { key in !written.contains { $0.key == key } }
                checker.check(
                    .roundTripsAllValues, all.count == written.count && extra.isEmpty, "allValues() holds exactly the written keys",
                    expected: "\(written.count) entries", actual: "\(all.count) entries, extra \(ConformanceText.keys(extra))")
            }
        }
    }

    /// Values that differ only in type stay apart: `.int(1)`, `.double(1)` and `.bool(true)` are
    /// three values, also inside arrays and dictionaries.
    func typeFidelityChecks() throws -> ConformanceReport {
        try group(.typeFidelity) { checker, _, provider in
            let items = ConformanceValues.lookalikes
            for (index, item) in items.enumerated() {
                checker.attempt(.typeFidelityDistinct, "write \(item.name)", key: "type.\(index)") { try provider.setValue(item.value, forKey: "type.\(index)") }
            }
            for (index, item) in items.enumerated() {
                let read = checker.attempt(.typeFidelityDistinct, "read \(item.name)", key: "type.\(index)") { try provider.value(forKey: "type.\(index)") }
                checker.expectValue(.typeFidelityDistinct, read ?? nil, item.value, "\(item.name) keeps its type", key: "type.\(index)")
            }
            // The same key holding each look-alike in turn.
            for item in items {
                checker.attempt(.typeFidelityReplace, "overwrite with \(item.name)", key: "type.same") { try provider.setValue(item.value, forKey: "type.same") }
                let read = checker.attempt(.typeFidelityReplace, "read \(item.name)", key: "type.same") { try provider.value(forKey: "type.same") }
                checker.expectValue(.typeFidelityReplace, read ?? nil, item.value, "\(item.name) replaces a look-alike of another type", key: "type.same")
            }
        }
    }
}
