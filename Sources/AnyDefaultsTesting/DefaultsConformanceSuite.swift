import AnyDefaultsCore
import Foundation

/// The conformance suite: checks that a ``DefaultsProvider`` keeps the contract of AnyDefaults.
///
/// Give it a way to open your provider on a storage location and the capabilities the provider
/// claims; then call one method per group of checks from your tests. Each method throws a
/// ``ConformanceFailure`` that lists every failed check (the check, the key, expected and actual),
/// so it works the same in Swift Testing and in XCTest. Groups that need a capability your provider
/// does not claim return a report saying they were skipped.
///
/// ```swift
/// import AnyDefaultsTesting
/// import Testing
///
/// let suite = DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch]) { storage in
///     try MyProvider(path: storage.directory.appendingPathComponent("store.db").path)
/// }
///
/// @Suite struct MyProviderConformance {
///     @Test func roundTrips() throws { try suite.roundTrips() }
///     @Test func typeFidelity() throws { try suite.typeFidelity() }
///     @Test func keys() throws { try suite.keys() }
///     @Test func removal() throws { try suite.removal() }
///     @Test func batches() throws { try suite.batches() }
///     @Test func persistence() throws { try suite.persistence() }
///     @Test func concurrency() throws { try suite.concurrency() }
///     @Test func changeEvents() throws { try suite.changeEvents() }
///     @Test func errors() throws { try suite.errors() }
///     @Test func prefixQueries() throws { try suite.prefixQueries() }
/// }
/// ```
///
/// Docs/Conformance.md lists every check and what it guarantees.
public struct DefaultsConformanceSuite: Sendable {
    /// Opens a provider on a storage location; called again on the same storage to reopen it.
    public typealias Open = @Sendable (ConformanceStorage) throws -> any DefaultsProvider
    /// Removes what a provider left outside the storage directory (a suite file, a table).
    public typealias Cleanup = @Sendable (ConformanceStorage) throws -> Void

    /// The capabilities the provider claims; the suite checks them.
    public let capabilities: DefaultsCapabilities
    let open: Open
    let cleanup: Cleanup?

    /// Creates a suite for a provider.
    ///
    /// - Parameters:
    ///   - capabilities: What the provider claims. Pass `provider.capabilities` to check exactly
    ///     what it reports.
    ///   - cleanup: Called when a group ends, to remove storage outside the directory.
    ///   - open: Opens the provider on `storage`. The suite calls it once per group, and again on
    ///     the same storage to check persistence and a second instance.
    public init(capabilities: DefaultsCapabilities, cleanup: Cleanup? = nil, open: @escaping Open) {
        self.capabilities = capabilities
        self.open = open
        self.cleanup = cleanup
    }

    /// A group of checks; Docs/Conformance.md lists what each checks.
    public enum Group: String, CaseIterable, Sendable, CustomStringConvertible {
        case roundTrips, typeFidelity, keys, removal, batches, persistence, concurrency, changeEvents, errors, prefixQueries

        public var description: String { rawValue }
    }

    /// Runs one group: the same as calling its method.
    ///
    /// With Swift Testing's arguments, every group becomes its own test case:
    ///
    /// ```swift
    /// @Test(arguments: DefaultsConformanceSuite.Group.allCases)
    /// func conformance(_ group: DefaultsConformanceSuite.Group) throws { try suite.run(group) }
    /// ```
    @discardableResult
    public func run(_ group: Group) throws -> ConformanceReport {
        switch group {
        case .roundTrips: try roundTrips()
        case .typeFidelity: try typeFidelity()
        case .keys: try keys()
        case .removal: try removal()
        case .batches: try batches()
        case .persistence: try persistence()
        case .concurrency: try concurrency()
        case .changeEvents: try changeEvents()
        case .errors: try errors()
        case .prefixQueries: try prefixQueries()
        }
    }

    /// Runs every group, and throws one failure listing the failed checks of all groups.
    @discardableResult
    public func run() throws -> [ConformanceReport] {
        var reports: [ConformanceReport] = []
        var failures: [ConformanceFailure] = []
        for group in Group.allCases {
            do {
                reports.append(try run(group))
            } catch let failure as ConformanceFailure {
                failures.append(failure)
            }
        }
        if let first = failures.first {
            throw ConformanceFailure(provider: first.provider, items: failures.flatMap(\.items))
        }
        return reports
    }

    /// Runs one group on fresh storage, with a provider opened on it.
    func group(
        _ name: String,
        requires required: DefaultsCapabilities = [],
        _ body: (ConformanceChecker, _ storage: ConformanceStorage, _ provider: any DefaultsProvider) throws -> Void
    ) throws -> ConformanceReport {
        try groupOnStorage(name, requires: required) { checker, storage in
            guard let provider = reopen(storage, checker, "open the provider") else { return }
            try body(checker, storage, provider)
        }
    }

    /// Runs one group on fresh storage; the body opens providers itself.
    func groupOnStorage(
        _ name: String,
        requires required: DefaultsCapabilities = [],
        _ body: (ConformanceChecker, _ storage: ConformanceStorage) throws -> Void
    ) throws -> ConformanceReport {
        let missing = required.subtracting(capabilities)
        if !missing.isEmpty {
            return ConformanceReport(group: name, checks: 0, skippedBecause: "the provider does not claim \(missing)")
        }
        let checker = ConformanceChecker(group: name)
        let identifier = "anydefaults-conformance-\(name)-\(UUID().uuidString)"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(identifier, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let storage = ConformanceStorage(directory: directory, identifier: identifier)
        defer {
            try? cleanup?(storage)
            try? FileManager.default.removeItem(at: directory)
        }
        do {
            try body(checker, storage)
        } catch {
            checker.fail("the group ran to its end", expected: "no error", actual: "threw \(error)")
        }
        let failures = checker.failures
        if !failures.isEmpty {
            throw ConformanceFailure(provider: checker.providerName, items: failures)
        }
        return ConformanceReport(group: name, checks: checker.checkCount, skippedBecause: nil)
    }

    /// Opens another provider on `storage`, failing the check if that throws.
    func reopen(_ storage: ConformanceStorage, _ checker: ConformanceChecker, _ check: String) -> (any DefaultsProvider)? {
        let provider = checker.attempt(check) { try open(storage) }
        if let provider { checker.providerName = String(describing: type(of: provider)) }
        return provider
    }
}
