import AnyDefaultsCore
import Foundation
import Synchronization

/// The conformance suite: checks that a ``DefaultsProvider`` keeps the contract of AnyDefaults.
///
/// Give it a way to open your provider on a storage location; then call one method per group of
/// checks from your tests. Each method throws a ``ConformanceFailure`` that lists every failed
/// check (its stable ``ConformanceCheck`` identifier, the key, expected and actual), so it works
/// the same in Swift Testing and in XCTest. A group that needs a capability your provider does not
/// claim, or a child process you did not configure, is skipped: inside a Swift Testing test the
/// test is cancelled (reported as skipped), elsewhere ``ConformanceSkipped`` is thrown; it never
/// passes.
///
/// ```swift
/// import AnyDefaultsTesting
/// import Testing
///
/// let suite = DefaultsConformanceSuite(child: .product(named: "MyStoreConformanceChild")) { storage in
///     try MyProvider(path: storage.directory.appendingPathComponent("store.db").path)
/// }
///
/// @Suite struct MyProviderConformance {
///     @Test func roundTrips() throws { try suite.roundTrips() }
///     @Test func persistence() throws { try suite.persistence() }
///     // ... one test per group, see Group
/// }
/// ```
///
/// Docs/Conformance.md lists every check and what it guarantees.
public struct DefaultsConformanceSuite: Sendable {
    /// Opens a provider on a storage location; called again on the same storage to reopen it.
    public typealias Open = @Sendable (ConformanceStorage) throws -> any DefaultsProvider
    /// Removes what a provider left outside the storage directory (a suite file, a table).
    public typealias Cleanup = @Sendable (ConformanceStorage) throws -> Void

    let claimed: DefaultsCapabilities?
    /// The seed, stress and timeout of this suite.
    public let options: Options
    /// The executable the multi-process, crash and restart checks run the provider in.
    public let child: ChildProcess?
    let open: Open
    let cleanup: Cleanup?
    private let reported: ReportedCapabilities

    /// Creates a suite for a provider.
    ///
    /// - Parameters:
    ///   - capabilities: What the provider claims. Leave it out to check what the provider itself
    ///     reports; pass it to pin your claim: the `capabilities` group fails if the provider
    ///     reports anything else.
    ///   - options: The seed, stress and timeout (see ``Options``).
    ///   - child: An executable that runs ``ConformanceChild/main(open:)`` with the same `open`,
    ///     for the checks that need other processes (restart, multi-process, crash atomicity,
    ///     external changes). Without it those groups are skipped.
    ///   - cleanup: Called when a group ends, to remove storage outside the directory.
    ///   - open: Opens the provider on `storage`. The suite calls it once per group, and again on
    ///     the same storage to check persistence and a second instance.
    public init(
        capabilities: DefaultsCapabilities? = nil, options: Options = Options(), child: ChildProcess? = nil,
        cleanup: Cleanup? = nil, open: @escaping Open
    ) {
        claimed = capabilities
        self.options = options
        self.child = child
        self.open = open
        self.cleanup = cleanup
        reported = ReportedCapabilities()
    }

    /// The capabilities the suite checks: those passed to the initializer, else those the
    /// provider reports (read once, from a provider opened on scratch storage).
    public var capabilities: DefaultsCapabilities {
        claimed ?? reportedCapabilities().capabilities ?? []
    }

    /// A group of checks; Docs/Conformance.md lists what each checks.
    public enum Group: String, CaseIterable, Sendable, CustomStringConvertible {
        case capabilities, roundTrips, typeFidelity, keys, removal, batches, errors, persistence, restart, concurrency,
            smallStack, changeEvents, externalChanges, multiProcess, crashAtomicity, model, prefixQueries

        public var description: String { rawValue }

        /// The capabilities the group checks; without them it is skipped.
        public var requiredCapabilities: DefaultsCapabilities {
            switch self {
            case .persistence, .restart: .persistent
            case .externalChanges: .externalChanges
            case .multiProcess: .multiProcess
            case .crashAtomicity: [.atomicBatch, .persistent]
            default: []
            }
        }

        /// Whether the group runs the provider in child processes (see ``ChildProcess``).
        public var needsChildProcess: Bool {
            switch self {
            case .restart, .multiProcess, .crashAtomicity: true
            default: false
            }
        }
    }

    /// Why `group` will be skipped, or `nil` when it runs. For Swift Testing's condition traits:
    ///
    /// ```swift
    /// @Test(.enabled(if: suite.skipReason(.multiProcess) == nil))
    /// func multiProcess() throws { try suite.multiProcess() }
    /// ```
    public func skipReason(_ group: Group) -> String? {
        let missing = group.requiredCapabilities.subtracting(capabilities)
        if !missing.isEmpty { return "the provider does not claim \(missing)" }
        if group.needsChildProcess {
            guard child != nil else {
                return "no child process configured (DefaultsConformanceSuite(child:), see Docs/Conformance.md)"
            }
            guard ChildConnection.isSupported else { return "child processes are not supported on this platform" }
        }
        if group == .externalChanges, !capabilities.contains(.persistent), child == nil || !ChildConnection.isSupported {
            return "no second instance to change the storage: the provider is not .persistent and no child process is configured"
        }
        return nil
    }

    /// Runs one group: the same as calling its method.
    ///
    /// Throws ``ConformanceFailure`` when a check fails. A skipped group never returns as if it
    /// passed: inside a Swift Testing test it cancels the test (shown as skipped), elsewhere it
    /// throws ``ConformanceSkipped``. Use ``report(_:)`` to get a skipped group's report instead.
    @discardableResult
    public func run(_ group: Group) throws -> ConformanceReport {
        let report = try self.report(group)
        if report.isSkipped { try ConformanceSkipped.signal(report) }
        return report
    }

    /// Runs one group and returns its report, skipped or passed; throws ``ConformanceFailure``
    /// when a check fails. For runners that print their own results, like `anydefaults verify`.
    public func report(_ group: Group) throws -> ConformanceReport {
        switch group {
        case .capabilities: try capabilityChecks()
        case .roundTrips: try roundTripChecks()
        case .typeFidelity: try typeFidelityChecks()
        case .keys: try keyChecks()
        case .removal: try removalChecks()
        case .batches: try batchChecks()
        case .errors: try errorChecks()
        case .persistence: try persistenceChecks()
        case .restart: try restartChecks()
        case .concurrency: try concurrencyChecks()
        case .smallStack: try smallStackChecks()
        case .changeEvents: try changeEventChecks()
        case .externalChanges: try externalChangeChecks()
        case .multiProcess: try multiProcessChecks()
        case .crashAtomicity: try crashAtomicityChecks()
        case .model: try modelChecks()
        case .prefixQueries: try prefixQueryChecks()
        }
    }

    /// Runs every group, and throws one failure listing the failed checks of all groups. Skipped
    /// groups are in the returned reports (``ConformanceReport/skippedBecause``); in a test,
    /// prefer one test per group, so that each skipped group shows as skipped.
    @discardableResult
    public func run() throws -> [ConformanceReport] {
        var reports: [ConformanceReport] = []
        var failures: [ConformanceFailure] = []
        for group in Group.allCases {
            do {
                reports.append(try report(group))
            } catch let failure as ConformanceFailure {
                failures.append(failure)
            }
        }
        if let first = failures.first {
            throw ConformanceFailure(provider: first.provider, items: failures.flatMap(\.items), seed: options.seed)
        }
        return reports
    }

    // MARK: Running a group

    /// Runs one group on fresh storage, with a provider opened on it.
    func group(
        _ group: Group,
        _ body: @escaping @Sendable (ConformanceChecker, _ storage: ConformanceStorage, _ provider: any DefaultsProvider) throws -> Void
    ) throws -> ConformanceReport {
        try groupOnStorage(group) { checker, storage in
            guard let provider = reopen(storage, checker, "open the provider") else { return }
            try body(checker, storage, provider)
        }
    }

    /// Runs one group on fresh storage; the body opens providers itself.
    ///
    /// The body runs on a thread of its own, and this one watches the calls into the providers
    /// it opens: one that has not returned after ``Options/timeout`` fails
    /// ``ConformanceCheck/suiteCompleted`` and ends the group there, its thread left where it
    /// hangs, so that a provider that deadlocks or waits without end fails instead of hanging the
    /// suite.
    func groupOnStorage(
        _ group: Group,
        _ body: @escaping @Sendable (ConformanceChecker, _ storage: ConformanceStorage) throws -> Void
    ) throws -> ConformanceReport {
        let started = ContinuousClock.now
        let checker = ConformanceChecker(group: group, seed: options.seed, timeout: options.timeout)
        let outcome = Mutex<Result<ConformanceReport?, any Error>?>(nil)
        let storageInUse = Mutex<ConformanceStorage?>(nil)
        // Removed once, by the group's thread at its end or, if it hangs, when it is given up.
        let storageRemoved = Atomic(false)
        let removeStorageOnce: @Sendable (ConformanceStorage, _ watched: Bool) -> Void = { [self] storage, watched in
            guard !storageRemoved.exchange(true, ordering: .relaxed) else { return }
            if watched { checker.calls.track(.cleanup) { removeStorage(storage) } } else { removeStorage(storage) }
        }
        let finished = DispatchSemaphore(value: 0)
        // Its own thread, not one of a pool that a hung call would hold for good; the stack of a
        // main thread, as the suite has always run with (the small-stack check makes its own).
        let thread = Thread { [self] in
            let result = Result { () throws -> ConformanceReport? in
                // The skip reason may open a provider (to learn its capabilities, once per
                // suite): watched too.
                checker.calls.track(.capabilitiesProbe) { _ = capabilities }
                if let reason = skipReason(group) {
                    return ConformanceReport(group: group.rawValue, checks: 0, skippedBecause: reason)
                }
                let storage = try makeStorage(group.rawValue)
                storageInUse.withLock { $0 = storage }
                defer { removeStorageOnce(storage, true) }
                do {
                    try body(checker, storage)
                } catch {
                    checker.fail(.suiteCompleted, "the group ran to its end", expected: "no error", actual: "threw \(ConformanceText.error(error))")
                }
                return nil
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        while finished.wait(timeout: .now() + 0.05) == .timedOut {
            guard let overdue = checker.calls.overdue(after: options.timeout) else { continue }
            // The group's thread stops at its next watched call, so that it does not go on beside
            // the groups after this one.
            checker.calls.close()
            // A check that bounds its own wait (`withTimeout`) may have reported this hang already.
            if !checker.isAbandoned {
                checker.abandon(
                    "\(overdue.call) returned", key: nil, expected: "it returns within \(options.timeout)",
                    actual: "it had not returned after \(String(format: "%.1f", overdue.seconds)) s (a deadlock, or a wait without end); the group stops here")
            }
            // Its storage goes on a thread of its own, as the storage's cleanup may wait for what
            // the provider holds.
            if let storage = storageInUse.withLock({ $0 }) {
                Thread.detachNewThread { removeStorageOnce(storage, false) }
            }
            break
        }
        switch outcome.withLock({ $0 }) {
        case .success(let skipped?): return skipped
        case .failure(let error): throw error
        case .success(nil), nil: break
        }
        let failures = checker.failures
        if !failures.isEmpty {
            throw ConformanceFailure(provider: checker.providerName, items: failures, seed: options.seed)
        }
        return ConformanceReport(
            group: group.rawValue, checks: checker.checkCount, skippedBecause: nil, seconds: (ContinuousClock.now - started).seconds)
    }

    /// Opens a provider on `storage` through the factory, watched: the factory's call and every
    /// call into the provider are noted in `checker`'s ``ConformanceChecker/calls``.
    func openWatched(_ storage: ConformanceStorage, _ checker: ConformanceChecker) throws -> any DefaultsProvider {
        let id = checker.calls.begin(.open)
        defer { checker.calls.end(id) }
        let provider = try open(storage)
        checker.providerName = String(describing: type(of: provider))
        return ConformanceWatchedProvider(provider, watch: checker.calls)
    }

    /// A fresh temporary directory and a unique identifier.
    func makeStorage(_ purpose: String) throws -> ConformanceStorage {
        let identifier = "anydefaults-conformance-\(purpose)-\(UUID().uuidString)"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(identifier, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return ConformanceStorage(directory: directory, identifier: identifier)
    }

    func removeStorage(_ storage: ConformanceStorage) {
        try? cleanup?(storage)
        try? FileManager.default.removeItem(at: storage.directory)
    }

    /// Opens another provider on `storage`, failing ``ConformanceCheck/suiteOpen`` if that throws,
    /// and checking that it reports the claimed capabilities.
    func reopen(_ storage: ConformanceStorage, _ checker: ConformanceChecker, _ detail: String) -> (any DefaultsProvider)? {
        let provider = checker.attempt(.suiteOpen, detail) { try openWatched(storage, checker) }
        if let provider {
            // Against the claim when there is one, else against what the first provider reported.
            let expected = capabilities
            checker.check(
                claimed == nil ? .capabilitiesStable : .capabilitiesAsClaimed, provider.capabilities == expected,
                "\(detail): the provider reports \(claimed == nil ? "the same capabilities as the first one" : "its claimed capabilities")",
                expected: "\(expected)", actual: "\(provider.capabilities)")
        }
        return provider
    }

    /// The capabilities a provider opened on scratch storage reports, read once.
    func reportedCapabilities() -> (capabilities: DefaultsCapabilities?, error: String?) {
        reported.value {
            do {
                let storage = try makeStorage("capabilities")
                defer { removeStorage(storage) }
                let provider = try open(storage)
                return (provider.capabilities, nil)
            } catch {
                return (nil, ConformanceText.error(error))
            }
        }
    }
}

/// The capabilities a provider reports, read once and shared by copies of a suite.
final class ReportedCapabilities: Sendable {
    private let state = Mutex<(capabilities: DefaultsCapabilities?, error: String?)?>(nil)

    func value(_ read: () -> (capabilities: DefaultsCapabilities?, error: String?)) -> (capabilities: DefaultsCapabilities?, error: String?) {
        if let known = state.withLock({ $0 }) { return known }
        let found = read()
        state.withLock { $0 = found }
        return found
    }
}

extension ConformanceSkipped {
    /// Ends the caller as skipped: inside a task (a Swift Testing test) the task is cancelled and
    /// `CancellationError` thrown, which Swift Testing reports as a cancelled (skipped) test;
    /// elsewhere ``ConformanceSkipped`` is thrown.
    static func signal(_ report: ConformanceReport) throws -> Never {
        var cancelled = false
        withUnsafeCurrentTask { task in
            if let task {
                task.cancel()
                cancelled = true
            }
        }
        if cancelled { throw CancellationError() }
        throw ConformanceSkipped(report: report)
    }
}
