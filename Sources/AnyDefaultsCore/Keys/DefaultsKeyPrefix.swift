/// A prefix of keys, as the prefix queries of ``DefaultsProvider`` take it
/// (``DefaultsProvider/keys(withPrefix:)``, ``DefaultsProvider/allValues(withPrefix:)``).
///
/// A key is under a prefix when the key's canonical form (Unicode NFC, the form every backend
/// stores) starts with the prefix's canonical form, Unicode scalar by scalar, which is byte by
/// byte in UTF-8. So a prefix spelled in NFD finds the keys stored in NFC; `"x"` finds `"x\u{301}"`
/// (a prefix may end inside a grapheme); `"e"` does not find `"é"` (one scalar in NFC). No character
/// is special: `%`, `_`, `*`, `?` and `[` are matched as themselves. The empty prefix is every key.
///
/// This is the order and the test an ordered index gives: the keys under a prefix are one range,
/// from the prefix's UTF-8 bytes up to ``upperBound``. A provider that stores canonical keys as
/// UTF-8 in byte order (SQLite's `BINARY` collation, LMDB's default comparison) serves a prefix
/// query with one range scan:
///
/// ```swift
/// let prefix = DefaultsKeyPrefix("tenant/acme/")
/// // SELECT key FROM t WHERE key >= :canonical AND key < :upperBound ORDER BY key
/// let keys = try rangeScan(from: prefix.canonical, below: prefix.upperBound)
/// ```
public struct DefaultsKeyPrefix: Sendable, Hashable, CustomStringConvertible {
    /// The prefix in canonical form (NFC), as stored keys are.
    public let canonical: String

    /// The prefix of `prefix`'s canonical form.
    public init(_ prefix: String) {
        canonical = Self.canonicalForm(prefix)
    }

    /// Whether this is the empty prefix, under which every key is.
    public var isEmpty: Bool { canonical.isEmpty }

    public var description: String { canonical.debugDescription }

    /// Whether `key` is under this prefix. `key` may be in any normalization form.
    public func contains(_ key: String) -> Bool {
        hasPrefixBytes(Self.canonicalForm(key))
    }

    /// Whether a key already in canonical form (as stored) is under this prefix: a comparison of
    /// bytes, without normalizing `canonicalKey`.
    public func containsCanonical(_ canonicalKey: String) -> Bool {
        hasPrefixBytes(canonicalKey)
    }

    /// The part of `key` (in any normalization form) that follows this prefix, in canonical
    /// form; `nil` if the key is not under the prefix. Prefix and remainder join again to the
    /// key: `prefix + remainder` reads and writes the same entry.
    public func remainder(of key: String) -> String? {
        let key = Self.canonicalForm(key)
        guard hasPrefixBytes(key) else { return nil }
        if isEmpty { return key }
        // The prefix ends on a scalar boundary of the key, so the rest is valid UTF-8.
        return String(decoding: key.utf8.dropFirst(canonical.utf8.count), as: UTF8.self)
    }

    /// The smallest string greater than every key under this prefix, in UTF-8 byte order (the
    /// prefix with its last scalar replaced by the next one): keys under the prefix are exactly
    /// those `>= canonical` and `< upperBound`. `nil` for the empty prefix, and for one made of
    /// U+10FFFF only, under which every key from `canonical` on lies.
    public var upperBound: String? {
        var scalars = Array(canonical.unicodeScalars)
        while let last = scalars.popLast() {
            let value = last.value == 0xD7FF ? 0xE000 : last.value + 1
            if let next = Unicode.Scalar(value) {
                scalars.append(next)
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                return String(result)
            }
        }
        return nil
    }

    /// Sorts canonical keys in UTF-8 byte order, the order of the prefix queries' results.
    public static func sorted(_ keys: [String]) -> [String] {
        keys.sorted { $0.utf8Precedes($1) }
    }

    private func hasPrefixBytes(_ key: String) -> Bool {
        if isEmpty { return true }
        let prefix = canonical.utf8
        let bytes = key.utf8
        guard bytes.count >= prefix.count else { return false }
        let matched = bytes.withContiguousStorageIfAvailable { key in
            prefix.withContiguousStorageIfAvailable { prefix in
                key.prefix(prefix.count).elementsEqual(prefix)
            }
        }
        return (matched ?? nil) ?? bytes.starts(with: prefix)
    }

    /// NFC, as keys are stored (without cost for ASCII); the empty string stays empty.
    private static func canonicalForm(_ text: String) -> String {
        guard !text.isEmpty else { return text }
        return (try? DefaultsValidation.canonicalKey(text, backend: "")) ?? text
    }
}
