/// ``DefaultsProvider/apply(_:ifUnchanged:)`` and ``DefaultsProvider/removeValues(ifUnchanged:)``
/// for a provider whose writes are one read-modify-write of all its values under a lock that every
/// writer takes (the JSON file, a UserDefaults suite): the comparison and the changes run inside
/// that one update, so they are atomic against every writer that takes the lock.
///
/// `update` runs its argument once, under the lock, on the values stored now, and applies the
/// changes it returns.
package enum ConditionalWrite {
    package typealias Update = (_ decide: ([String: DefaultsValue]) -> [DefaultsChange]) throws(DefaultsError) -> Void

    /// Applies `changes` if every key of `expected` still holds its value (`nil`: absent).
    package static func apply(
        _ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?], backend: String, update: Update
    ) throws(DefaultsError) -> Bool {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: backend)
        let expected = try DefaultsValidation.canonicalConditions(expected, backend: backend)
        var applied = false
        try update { values in
            applied = expected.allSatisfy { values[$0.key] == $0.value }
            return applied ? changes : []
        }
        return applied
    }

    /// Removes each key of `expected` that still holds its value; returns the keys removed.
    package static func removeValues(
        ifUnchanged expected: [String: DefaultsValue], backend: String, update: Update
    ) throws(DefaultsError) -> [String] {
        let expected = try DefaultsValidation.canonicalExpectations(expected, backend: backend)
        guard !expected.isEmpty else { return [] }
        var removed: [String] = []
        try update { values in
            removed = expected.filter { values[$0.key] == $0.value }.map(\.key)
            return removed.map { .remove($0) }
        }
        return removed
    }
}
