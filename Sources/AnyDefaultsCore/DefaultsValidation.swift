import Foundation

/// The input rules every built-in backend applies before it writes, for custom providers to reuse.
///
/// ```swift
/// let key = try DefaultsValidation.canonicalKey(rawKey, backend: "MyStore")
/// try DefaultsValidation.checkValue(value, forKey: key, backend: "MyStore")
/// ```
public enum DefaultsValidation {
    /// Checks that `key` is a valid key and returns its canonical form.
    ///
    /// The canonical form is Unicode NFC, so that canonically equivalent keys (equal under Swift's
    /// `==`) become the same bytes in backends that store bytes. ASCII keys are returned as they
    /// are, without cost.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidKey`` for an empty key.
    @inlinable
    public static func canonicalKey(_ key: String, backend: String) throws(DefaultsError) -> String {
        if key.isEmpty {
            throw DefaultsError(.invalidKey, "A key must not be empty.", backend: backend, key: key)
        }
        // Native strings are contiguous UTF-8: scanning the buffer is several times cheaper than
        // walking the UTF-8 view, and this runs on every read.
        let isASCII = key.utf8.withContiguousStorageIfAvailable { $0.allSatisfy { $0 < 0x80 } }
            ?? key.utf8.allSatisfy { $0 < 0x80 }
        if isASCII { return key }
        return key.precomposedStringWithCanonicalMapping
    }

    /// The key a view scoped to `prefix` stores for the key `name` a caller gave it: `prefix +
    /// name`, after checking `name` as a key (a scoped view accepts what the store accepts, for
    /// the part the caller wrote).
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidKey``, naming `name`, for an empty
    ///   `name` (which would read and write the prefix itself), and for a `name` that starts with
    ///   a character that combines with the end of the prefix when the key is made canonical
    ///   (`"cafe"` and `"\u{301}x"` become `"café x"` without the space): such a key would be
    ///   stored outside the scope, where the view's listing and removal cannot reach it.
    public static func scopedKey(_ name: String, prefix: String, backend: String) throws(DefaultsError) -> String {
        guard let first = name.utf8.first else {
            throw DefaultsError(.invalidKey, "A key must not be empty.", backend: backend, key: name)
        }
        // An ASCII character never combines with what precedes it, nor moves before it.
        if first < 0x80 || prefix.isEmpty { return prefix + name }
        let joined = prefix + name
        let canonicalPrefix = DefaultsKeyPrefix(prefix)
        guard let rest = canonicalPrefix.remainder(of: joined),
            rest.utf8.elementsEqual(try canonicalKey(name, backend: backend).utf8)
        else {
            throw DefaultsError(
                .invalidKey,
                "The key starts with a character that combines with the end of the scope's prefix \(prefix.debugDescription), so it would be stored outside the scope.",
                backend: backend, key: name)
        }
        return joined
    }

    /// Checks that `value` can be stored: it nests no deeper than
    /// ``DefaultsValue/maximumNestingDepth``.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidValue``, naming the key but not the value.
    @inlinable
    public static func checkValue(_ value: DefaultsValue, forKey key: String, backend: String) throws(DefaultsError) {
        switch value {
        case .array, .dictionary:
            let depth = value.nestingDepth
            if depth > DefaultsValue.maximumNestingDepth {
                throw DefaultsError(
                    .invalidValue,
                    "The value nests \(depth) levels deep; at most \(DefaultsValue.maximumNestingDepth) are accepted.",
                    backend: backend, key: key)
            }
        default:
            return
        }
    }

    /// Validates a whole batch and returns it with canonical keys, so that a bad change rejects
    /// the batch before anything is written.
    public static func canonicalChanges(_ changes: [DefaultsChange], backend: String) throws(DefaultsError) -> [DefaultsChange] {
        var result: [DefaultsChange] = []
        result.reserveCapacity(changes.count)
        for change in changes {
            switch change {
            case .set(let key, let value):
                let key = try canonicalKey(key, backend: backend)
                try checkValue(value, forKey: key, backend: backend)
                result.append(.set(key, value))
            case .remove(let key):
                result.append(.remove(try canonicalKey(key, backend: backend)))
            }
        }
        return result
    }

    /// The expectations of ``DefaultsProvider/removeValues(ifUnchanged:)`` with canonical keys,
    /// in UTF-8 order of the keys.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidKey`` for an empty key.
    public static func canonicalExpectations(
        _ expected: [String: DefaultsValue], backend: String
    ) throws(DefaultsError) -> [(key: String, value: DefaultsValue)] {
        var result: [(key: String, value: DefaultsValue)] = []
        result.reserveCapacity(expected.count)
        for (key, value) in expected {
            result.append((try canonicalKey(key, backend: backend), value))
        }
        return result.sorted { $0.key.utf8Precedes($1.key) }
    }

    /// The conditions of ``DefaultsProvider/apply(_:ifUnchanged:)`` with canonical keys, in UTF-8
    /// order of the keys (`nil`: the key must be absent).
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidKey`` for an empty key.
    public static func canonicalConditions(
        _ expected: [String: DefaultsValue?], backend: String
    ) throws(DefaultsError) -> [(key: String, value: DefaultsValue?)] {
        var result: [(key: String, value: DefaultsValue?)] = []
        result.reserveCapacity(expected.count)
        for (key, value) in expected {
            result.append((try canonicalKey(key, backend: backend), value))
        }
        return result.sorted { $0.key.utf8Precedes($1.key) }
    }
}
