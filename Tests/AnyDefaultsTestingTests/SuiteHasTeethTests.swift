import AnyDefaultsCore
import AnyDefaultsMemory
import AnyDefaultsTesting
import Foundation
import Testing
import TestSupport

/// The conformance suite must fail every in-memory provider that breaks the contract, naming the
/// check that caught it, and pass the same provider without a defect and `MemoryProvider`. The
/// file-backed broken providers, which also break across processes, are in BrokenFileProviderTests.
@Suite(.ownThreads) struct SuiteHasTeethTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var defect: BrokenProvider.Defect
        var check: ConformanceCheck
        var testDescription: String { "\(defect.rawValue) → \(check)" }
    }

    static let cases: [Case] = [
        Case(defect: .dropsDateType, check: .typeFidelityDistinct),
        Case(defect: .dropsDateType, check: .roundTripsScalar),
        Case(defect: .losesDoublePrecision, check: .roundTripsScalar),
        Case(defect: .keysMissOne, check: .keysListExact),
        Case(defect: .ignoresCanonicalEquivalence, check: .keysCanonicalSame),
        Case(defect: .nonAtomicBatch, check: .batchesNoTrace),
        Case(defect: .noChangeEvents, check: .changeEventsChange),
        Case(defect: .eventsForNoOps, check: .changeEventsNoOp),
        Case(defect: .forgetsOnReopen, check: .persistenceReopen),
        Case(defect: .losesConcurrentUpdates, check: .concurrencyNoLostUpdate),
        Case(defect: .tearsConcurrentReads, check: .concurrencyNoTornRead),
        Case(defect: .acceptsEmptyKey, check: .errorsEmptyKey),
        Case(defect: .removeAbsentThrows, check: .removalAbsent),
        // The suite watches its calls through a wrapper of the provider: a cancel must still
        // reach the provider as a cancel, not as a release that would end the observation.
        Case(defect: .cancelDoesNothing, check: .changeEventsCancelOne),
    ]

    /// The harness on `defect`. A broken provider runs with a short timeout: the suite waits that
    /// long for each event a provider without events never sends (the default, 20 s a wait, kept
    /// this suite running for minutes); the harness without a defect keeps the default.
    static func suite(for defect: BrokenProvider.Defect) -> DefaultsConformanceSuite {
        let options = DefaultsConformanceSuite.Options(timeout: defect == .none ? .seconds(20) : .seconds(3))
        return DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch], options: options) { storage in
            BrokenProvider(defect, identifier: storage.identifier)
        }
    }

    @Test(arguments: cases)
    func brokenProviderFailsTheRightCheck(_ testCase: Case) async throws {
        let suite = Self.suite(for: testCase.defect)
        guard let group = testCase.check.group else { throw CancellationError() }
        do {
            let report = try await BlockingWork.run { try suite.report(group) }
            Issue.record("\(testCase.defect) passed \(report) but should fail [\(testCase.check)]")
        } catch let failure as ConformanceFailure {
            let item = failure.items.first { $0.id == testCase.check }
            #expect(item != nil, "no failure of [\(testCase.check)] in:\n\(failure)")
            #expect(failure.provider == "BrokenProvider")
            if let item {
                // The message names the check and shows expected and actual.
                #expect(item.description.hasPrefix("[\(testCase.check.rawValue)] "))
                #expect(item.description.contains("expected \(item.expected), got \(item.actual)"))
                #expect(!item.expected.isEmpty && !item.actual.isEmpty && item.expected != item.actual)
            }
        }
    }

    @Test func theSameHarnessWithoutADefectPassesEveryGroupItCanRun() async throws {
        let reports = try await BlockingWork.run { try Self.suite(for: .none).run() }
        #expect(reports.map(\.group) == DefaultsConformanceSuite.Group.allCases.map(\.rawValue))
        let ran = reports.filter { !$0.isSkipped }
        #expect(ran.allSatisfy { $0.checks > 0 })
        // It claims no external changes and has no child process: those groups are skipped.
        #expect(Set(reports.filter(\.isSkipped).map(\.group)) == ["restart", "externalChanges", "multiProcess", "crashAtomicity"])
    }

    @Test func inMemoryProviderPassesAndSkipsWhatItDoesNotClaim() async throws {
        let suite = DefaultsConformanceSuite { _ in MemoryProvider() }
        #expect(suite.capabilities == MemoryProvider().capabilities)
        let reports = try await BlockingWork.run { try suite.run() }
        let skipped = Set(reports.filter(\.isSkipped).map(\.group))
        #expect(skipped == ["persistence", "restart", "externalChanges", "multiProcess", "crashAtomicity"])
        #expect(reports.filter { !$0.isSkipped }.allSatisfy { $0.checks > 0 })
    }

    @Test func everyFailureIsListedWithItsCheckAndTheSeed() async throws {
        do {
            _ = try await BlockingWork.run { try Self.suite(for: .keysMissOne).run() }
            Issue.record("keysMissOne passed the whole suite")
        } catch let failure as ConformanceFailure {
            let lines = failure.description.components(separatedBy: "\n")
            #expect(lines.first == "BrokenProvider failed \(failure.items.count) conformance check(s):")
            #expect(lines.count == failure.items.count + 2)
            #expect(lines.last == "  seed \(failure.seed): rerun with ANYDEFAULTS_CONFORMANCE_SEED=\(failure.seed)")
            #expect(failure.checks.contains(.keysListExact))
            #expect(failure.items.allSatisfy { $0.id.group?.rawValue == $0.group || $0.id.group == nil })
        }
    }

    /// From XCTest a group is called the same way; the thrown failure is what makes it fail.
    @Test func aFailureIsAThrownError() async {
        await #expect(throws: ConformanceFailure.self) { try await BlockingWork.run { try Self.suite(for: .noChangeEvents).changeEvents() } }
    }
}
