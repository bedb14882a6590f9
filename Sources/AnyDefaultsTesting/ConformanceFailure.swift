/// The failures of one or more groups of conformance checks, thrown by the group's method.
///
/// Its description lists every failed check, one per line, each naming the check's stable
/// identifier, what was done, the key, and the expected and actual results, and ends with the seed
/// that reproduces the run, so that a thrown `ConformanceFailure` reads well in Swift Testing and
/// in XCTest alike.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// One failed check.
    public struct Item: Sendable, CustomStringConvertible {
        /// The stable identifier of the check that failed: match on this.
        public var id: ConformanceCheck
        /// The group that ran it, for example `"roundTrips"`.
        public var group: String
        /// What was done when it failed, for example `"read back Int64.max at once"`; free text
        /// that may change between versions.
        public var check: String
        /// The key involved, where there is one.
        public var key: String?
        /// What the contract requires.
        public var expected: String
        /// What the provider did.
        public var actual: String

        public init(id: ConformanceCheck, group: String, check: String, key: String?, expected: String, actual: String) {
            (self.id, self.group, self.check, self.key) = (id, group, check, key)
            (self.expected, self.actual) = (expected, actual)
        }

        public var description: String {
            var text = "[\(id)] \(check)"
            if let key { text += " (key \(ConformanceText.key(key)))" }
            return text + ": expected \(expected), got \(actual)"
        }
    }

    /// The provider that failed.
    public var provider: String
    /// Every failed check, in the order they ran.
    public var items: [Item]
    /// The seed of the run's generated keys, values and operations; set it again (suite option or
    /// `ANYDEFAULTS_CONFORMANCE_SEED`) to reproduce the run.
    public var seed: UInt64

    public init(provider: String, items: [Item], seed: UInt64) {
        self.provider = provider
        self.items = items
        self.seed = seed
    }

    /// The identifiers of the failed checks, each once, in the order they first failed.
    public var checks: [ConformanceCheck] {
        var seen: Set<ConformanceCheck> = []
        return items.map(\.id).filter { seen.insert($0).inserted }
    }

    public var description: String {
        "\(provider) failed \(items.count) conformance check(s):\n"
            + items.map { "  - \($0)\n" }.joined()
            + "  seed \(seed): rerun with \(DefaultsConformanceSuite.Options.seedVariable)=\(seed)"
    }
}

/// What a group of checks did.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// The group, for example `"batches"`.
    public var group: String
    /// How many checks ran.
    public var checks: Int
    /// Set when the group did not run: the provider does not claim what it needs, or it needs a
    /// child process that was not configured. Then no check ran, and the group did not pass.
    public var skippedBecause: String?
    /// How long the group took, in seconds.
    public var seconds: Double

    public init(group: String, checks: Int, skippedBecause: String?, seconds: Double = 0) {
        self.group = group
        self.checks = checks
        self.skippedBecause = skippedBecause
        self.seconds = seconds
    }

    /// Whether the group was skipped rather than run.
    public var isSkipped: Bool { skippedBecause != nil }

    public var description: String {
        if let skippedBecause { return "\(group): skipped (\(skippedBecause))" }
        return "\(group): \(checks) checks passed"
    }
}

/// Thrown by a group's method, outside a Swift Testing test, when the group is skipped, so that a
/// skipped group never reads as a pass. Inside a Swift Testing test the test is cancelled instead,
/// which reports it as skipped; from XCTest, `AnyDefaultsTestingXCTest` turns it into `XCTSkip`.
public struct ConformanceSkipped: Error, Sendable, CustomStringConvertible {
    /// The skipped group's report.
    public var report: ConformanceReport

    public var description: String { "conformance group \(report.group) skipped: \(report.skippedBecause ?? "")" }
}
