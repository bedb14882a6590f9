import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Errors: an empty key is rejected by every operation with an `invalidKey` error; a value
    /// nested deeper than ``DefaultsValue/maximumNestingDepth`` with `invalidValue`, storing
    /// nothing, and the error's description does not contain the value; a value at the maximum
    /// depth is accepted; the store works normally after the errors.
    @discardableResult
    public func errors() throws -> ConformanceReport {
        try group("errors") { checker, _, provider in
            checker.expectError(.invalidKey, "value(forKey: \"\") is rejected") { _ = try provider.value(forKey: "") }
            checker.expectError(.invalidKey, "setValue(forKey: \"\") is rejected") { try provider.setValue(.int(1), forKey: "") }
            checker.expectError(.invalidKey, "removeValue(forKey: \"\") is rejected") { try provider.removeValue(forKey: "") }
            checker.expectError(.invalidKey, "apply([.set(\"\", …)]) is rejected") { try provider.apply([.set("", .int(1))]) }
            checker.expectError(.invalidKey, "apply([.remove(\"\")]) is rejected") { try provider.apply([.remove("")]) }

            let secret = "s3cr3t-value-never-in-errors"
            let tooDeep = ConformanceValues.nested(depth: DefaultsValue.maximumNestingDepth + 1, leaf: .string(secret))
            do {
                try provider.setValue(tooDeep, forKey: "err.deep")
                checker.fail("a value nested too deeply is rejected", key: "err.deep", expected: "a DefaultsError with code invalidValue", actual: "no error")
            } catch let error as DefaultsError {
                checker.check(error.code == .invalidValue, "a value nested too deeply is rejected", key: "err.deep", expected: "code invalidValue", actual: "code \(error.code)")
                checker.check(!"\(error)".contains(secret) && !error.message.contains(secret), "an error never shows a stored value", key: "err.deep", expected: "a description without the value", actual: "\(error)")
                checker.check(error.key == "err.deep", "an error names its key", key: "err.deep", expected: "key \"err.deep\"", actual: "key \(error.key.debugDescription)")
            } catch {
                checker.fail("a value nested too deeply is rejected", key: "err.deep", expected: "a DefaultsError", actual: "\(type(of: error))")
            }
            let afterRejection = checker.attempt("read after a rejected write", key: "err.deep") { try provider.value(forKey: "err.deep") }
            checker.expectValue(afterRejection ?? nil, nil, "a rejected write stores nothing", key: "err.deep")

            let deepest = ConformanceValues.nested(depth: DefaultsValue.maximumNestingDepth)
            checker.attempt("write a value at the maximum depth", key: "err.deepest") { try provider.setValue(deepest, forKey: "err.deepest") }
            let read = checker.attempt("read a value at the maximum depth", key: "err.deepest") { try provider.value(forKey: "err.deepest") }
            checker.expectValue(read ?? nil, deepest, "a value at the maximum depth round-trips", key: "err.deepest")

            checker.attempt("write after errors", key: "err.ok") { try provider.setValue(.bool(true), forKey: "err.ok") }
            let ok = checker.attempt("read after errors", key: "err.ok") { try provider.value(forKey: "err.ok") }
            checker.expectValue(ok ?? nil, .bool(true), "the store works after rejected calls", key: "err.ok")
        }
    }
}
