import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Persistence (for providers that claim ``DefaultsCapabilities/persistent``), within this
    /// process: what one instance wrote, removed and batched is there after it is released and the
    /// storage is opened again; two instances open at once read each other's writes, removals and
    /// `removeAll()`, also when every write keeps the same size, and report store identities that
    /// overlap (``AnyDefaultsCore/DefaultsProvider/storeIdentity``). The ``restart()`` group checks the
    /// same across a real restart, in a new process.
    func persistenceChecks() throws -> ConformanceReport {
        try groupOnStorage(.persistence) { checker, storage in
            let values = ConformanceValues.scalars + ConformanceValues.strings + ConformanceValues.exactStrings + ConformanceValues.dates
                + ConformanceValues.containers + ConformanceValues.nestedExtremes.prefix(6)
            var expected: [String: DefaultsValue] = [:]
            do {
                guard let provider = reopen(storage, checker, "open the provider") else { return }
                for (index, edge) in values.enumerated() {
                    let key = "p.\(index)"
                    if checker.attempt(.persistenceReopen, "write \(edge.name)", key: key, { try provider.setValue(edge.value, forKey: key) }) != nil {
                        expected[key] = edge.value
                    }
                }
                checker.attempt(.persistenceReopen, "apply a batch") {
                    try provider.apply([.set("p.batch.a", .int(1)), .set("p.batch.b", .int(2)), .remove("p.0"), .set("p.1", .string("overwritten"))])
                }
                expected["p.batch.a"] = .int(1)
                expected["p.batch.b"] = .int(2)
                expected["p.0"] = nil
                expected["p.1"] = .string("overwritten")
                checker.attempt(.persistenceReopen, "remove a key", key: "p.2") { try provider.removeValue(forKey: "p.2") }
                expected["p.2"] = nil
            }
            // The first instance is released at the end of the scope above, before reopening.
            guard let reopened = reopen(storage, checker, "reopen the storage") else { return }
            for (key, value) in expected {
                let read = checker.attempt(.persistenceReopen, "read after reopening", key: key) { try reopened.value(forKey: key) }
                checker.expectValue(.persistenceReopen, read ?? nil, value, "a value survives reopening", key: key)
            }
            for key in ["p.0", "p.2"] {
                let removed = checker.attempt(.persistenceReopen, "read a removed key after reopening", key: key) { try reopened.value(forKey: key) }
                checker.expectValue(.persistenceReopen, removed ?? nil, nil, "a removal survives reopening", key: key)
            }
            checkKeys(reopened, expected: expected, checker, .persistenceReopen, "keys() survive reopening")

            // Two instances at once.
            guard let second = reopen(storage, checker, "open a second instance") else { return }
            func expectRead(_ provider: any DefaultsProvider, _ key: String, _ value: DefaultsValue?, _ id: ConformanceCheck, _ detail: String) {
                let read = checker.attempt(id, detail, key: key) { try provider.value(forKey: key) }
                checker.expectValue(id, read ?? nil, value, detail, key: key)
            }
            checker.attempt(.persistenceSecondInstance, "write through the first", key: "p.shared") { try reopened.setValue(.string("from first"), forKey: "p.shared") }
            expectRead(second, "p.shared", .string("from first"), .persistenceSecondInstance, "a second open instance reads the first one's write")
            checker.attempt(.persistenceSecondInstance, "write through the second", key: "p.shared") { try second.setValue(.int(2), forKey: "p.shared") }
            expectRead(reopened, "p.shared", .int(2), .persistenceSecondInstance, "the first instance reads the second one's write")
            checker.attempt(.persistenceSecondInstance, "remove through the second", key: "p.shared") { try second.removeValue(forKey: "p.shared") }
            expectRead(reopened, "p.shared", nil, .persistenceSecondInstance, "the first instance sees the second one's removal")

            // The same size every time: a provider that reloads only when the file's size changes fails.
            for round in 0..<6 {
                let (writer, reader) = round.isMultiple(of: 2) ? (reopened, second) : (second, reopened)
                let value = DefaultsValue.string("round \(round) \(String(repeating: Character(UnicodeScalar(UInt8(97 + round))), count: 40))")
                _ = checker.attempt(.persistenceSameSize, "read before the write", key: "p.same") { try reader.value(forKey: "p.same") }
                checker.attempt(.persistenceSameSize, "write a value of the same size", key: "p.same") { try writer.setValue(value, forKey: "p.same") }
                expectRead(reader, "p.same", value, .persistenceSameSize, "the other instance reads a write of the same size")
            }

            checker.attempt(.persistenceSecondInstance, "removeAll() through the second") { try second.removeAll() }
            checkKeys(reopened, expected: [], checker, .persistenceSecondInstance, "the first instance sees the second one's removeAll()")

            // Both name one storage: a copy or move from one to the other must be refused, and a
            // provider whose identity changes with each instance would let it destroy the data.
            if let first = reopened.storeIdentity, let other = second.storeIdentity {
                checker.check(
                    .persistenceIdentity, first.overlaps(other) && other.overlaps(first),
                    "two instances on the same storage report identities that overlap",
                    expected: "overlapping identities", actual: "\(first) and \(other)")
            } else {
                checker.check(
                    .persistenceIdentity, reopened.storeIdentity == nil && second.storeIdentity == nil,
                    "every instance on the storage reports an identity, or none does",
                    expected: "both or neither", actual: "\(reopened.storeIdentity.map(String.init(describing:)) ?? "nil") and \(second.storeIdentity.map(String.init(describing:)) ?? "nil")")
            }
        }
    }
}
