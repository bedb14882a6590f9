/// The failures of one group of conformance checks, thrown by the group's method.
///
/// Its description lists every failed check, one per line, each naming the group, the check, the
/// key, and the expected and actual results, so that a thrown `ConformanceFailure` reads well in
/// Swift Testing and in XCTest alike.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// One failed check.
    public struct Item: Sendable, CustomStringConvertible {
        /// The group, for example `"roundTrips"`.
        public var group: String
        /// The check, for example `"Int64.max"`.
        public var check: String
        /// The key involved, where there is one.
        public var key: String?
        /// What the contract requires.
        public var expected: String
        /// What the provider did.
        public var actual: String

        public var description: String {
            var text = "[\(group)] \(check)"
            if let key { text += " (key \(key.debugDescription.prefix(80)))" }
            return text + ": expected \(expected), got \(actual)"
        }
    }

    /// The provider that failed.
    public var provider: String
    /// Every failed check of the group, in the order they ran.
    public var items: [Item]

    public var description: String {
        "\(provider) failed \(items.count) conformance check(s):\n"
            + items.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// What a group of checks did, returned by each group's method when it passes.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// The group, for example `"batches"`.
    public var group: String
    /// How many checks ran.
    public var checks: Int
    /// Set when the provider does not claim what the group needs; then no check ran.
    public var skippedBecause: String?

    public var description: String {
        if let skippedBecause { return "\(group): skipped (\(skippedBecause))" }
        return "\(group): \(checks) checks passed"
    }
}
