import AnyDefaultsCore
import Foundation

extension DefaultsConformanceSuite {
    /// Errors: an empty key is rejected by every operation with an `invalidKey` error; a value
    /// nested deeper than ``DefaultsValue/maximumNestingDepth`` on any branch with `invalidValue`,
    /// naming its key and storing nothing; no error shows any part of a stored or rejected value
    /// (a secret placed at the start, middle and end of strings, as a dictionary key, as data, in
    /// the stored value and in the rejected one); a value at the maximum depth is accepted; the
    /// store works normally after the errors.
    func errorChecks() throws -> ConformanceReport {
        try group(.errors) { checker, _, provider in
            let secret = checker.secret
            let padding = String(repeating: "p", count: 300)
            let secretValues: [DefaultsValue] = [
                .string(secret),
                .string(padding + secret + padding),
                .string(padding + padding + secret),
                .array((0..<40).map { .int(Int64($0)) } + [.string(secret)]),
                .dictionary([secret: .int(1), "other": .int(2)]),
                .data(Data(secret.utf8)),
            ]
            // A stored value the errors below must not show either.
            checker.attempt(.errorsNothingStored, "store a value", key: "err.stored") {
                try provider.setValue(.dictionary(["token": .string(secret), "padding": .string(padding)]), forKey: "err.stored")
            }

            for (index, value) in secretValues.enumerated() {
                checker.expectError(.errorsEmptyKey, .invalidKey, "setValue(forKey: \"\") is rejected (value \(index))") { try provider.setValue(value, forKey: "") }
                checker.expectError(.errorsEmptyKey, .invalidKey, "apply([.set(\"\", …)]) is rejected (value \(index))") {
                    try provider.apply([.set("err.fine", value), .set("", value)])
                }
            }
            checker.expectError(.errorsEmptyKey, .invalidKey, "value(forKey: \"\") is rejected") { _ = try provider.value(forKey: "") }
            checker.expectError(.errorsEmptyKey, .invalidKey, "removeValue(forKey: \"\") is rejected") { try provider.removeValue(forKey: "") }
            checker.expectError(.errorsEmptyKey, .invalidKey, "apply([.remove(\"\")]) is rejected") { try provider.apply([.remove("")]) }

            // Too deep on every branch: the first, a middle and the last child, under one of
            // several dictionary keys, after a sibling at the maximum depth; with the secret.
            let limit = DefaultsValue.maximumNestingDepth
            func deep(_ extra: Int, leaf: DefaultsValue) -> DefaultsValue { ConformanceValues.nested(depth: limit + extra - 1, leaf: .array([leaf])) }
            let tooDeep: [(String, DefaultsValue)] = [
                ("a chain one level too deep", ConformanceValues.nested(depth: limit + 1, leaf: .string(secret))),
                ("too deep after a secret", .array([.string(secret), deep(0, leaf: .int(1))])),
                ("too deep in the first element", .array([deep(0, leaf: .string(secret)), .int(1), .int(2)])),
                ("too deep in a middle element", .array([.int(1), deep(0, leaf: .string(secret)), .int(2)])),
                ("too deep in the last element", .array([.int(1), .string(secret), deep(0, leaf: .int(3))])),
                ("too deep under one of several dictionary keys",
                    .dictionary(["a": .int(1), "b": .string(secret), "y": deep(0, leaf: .int(1)), "z": .array([])])),
                ("too deep after a sibling at the maximum depth",
                    .array([ConformanceValues.nested(depth: limit - 1), ConformanceValues.nested(depth: limit, leaf: .string(secret))])),
                ("far too deep", ConformanceValues.nested(depth: limit * 4, leaf: .data(Data(secret.utf8)))),
            ]
            for (name, value) in tooDeep {
                for key in ["err.deep", "err.stored"] {
                    do {
                        try provider.setValue(value, forKey: key)
                        checker.fail(.errorsTooDeep, "a value \(name) is rejected", key: key, expected: "a DefaultsError with code invalidValue", actual: "no error")
                    } catch let error as DefaultsError {
                        checker.inspect(error, during: "writing a value \(name)", key: key)
                        checker.check(.errorsTooDeep, error.code == .invalidValue, "a value \(name) is rejected", key: key, expected: "code invalidValue", actual: "code \(error.code)")
                        checker.check(.errorsTooDeep, error.key == key, "the error names its key", key: key, expected: "key \(ConformanceText.key(key))", actual: "key \(error.key.map(ConformanceText.key) ?? "nil")")
                    } catch {
                        checker.inspect(error, during: "writing a value \(name)", key: key)
                        checker.fail(.errorsTooDeep, "a value \(name) is rejected", key: key, expected: "a DefaultsError", actual: ConformanceText.error(error))
                    }
                }
            }
            let afterRejection = checker.attempt(.errorsNothingStored, "read after a rejected write", key: "err.deep") { try provider.value(forKey: "err.deep") }
            checker.expectValue(.errorsNothingStored, afterRejection ?? nil, nil, "a rejected write stores nothing", key: "err.deep")
            let kept = checker.attempt(.errorsNothingStored, "read after rejected overwrites", key: "err.stored") { try provider.value(forKey: "err.stored") }
            checker.expectValue(
                .errorsNothingStored, kept ?? nil, .dictionary(["token": .string(secret), "padding": .string(padding)]),
                "a rejected overwrite keeps the previous value", key: "err.stored")
            let fine = checker.attempt(.errorsNothingStored, "read a key of rejected batches", key: "err.fine") { try provider.value(forKey: "err.fine") }
            checker.expectValue(.errorsNothingStored, fine ?? nil, nil, "a rejected batch stores nothing", key: "err.fine")

            let deepest = ConformanceValues.nested(depth: limit)
            let wide = DefaultsValue.dictionary(["a": ConformanceValues.nested(depth: limit - 1), "b": .array([ConformanceValues.nested(depth: limit - 2)])])
            for (name, key, value) in [("a chain", "err.deepest", deepest), ("several branches", "err.wide", wide)] {
                checker.attempt(.errorsMaximumDepth, "write \(name) at the maximum depth", key: key) { try provider.setValue(value, forKey: key) }
                let read = checker.attempt(.errorsMaximumDepth, "read \(name) at the maximum depth", key: key) { try provider.value(forKey: key) }
                checker.expectValue(.errorsMaximumDepth, read ?? nil, value, "\(name) at the maximum depth round-trips", key: key)
            }

            checker.attempt(.errorsWorksAfter, "write after errors", key: "err.ok") { try provider.setValue(.bool(true), forKey: "err.ok") }
            let ok = checker.attempt(.errorsWorksAfter, "read after errors", key: "err.ok") { try provider.value(forKey: "err.ok") }
            checker.expectValue(.errorsWorksAfter, ok ?? nil, .bool(true), "the store works after rejected calls", key: "err.ok")
            checkKeys(provider, expected: ["err.stored", "err.deepest", "err.wide", "err.ok"], checker, .errorsWorksAfter, "keys() after rejected calls")
        }
    }
}
