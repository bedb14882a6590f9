import AnyDefaultsCore
import AnyDefaultsMemory
import AnyDefaultsTesting
import Foundation
import Testing

/// The conformance suite must fail every provider that breaks the contract, naming the check
/// that caught it, and pass a provider that keeps it.
@Suite struct SuiteHasTeethTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var defect: BrokenProvider.Defect
        var group: String
        var check: String
        var run: @Sendable (DefaultsConformanceSuite) throws -> ConformanceReport
        var testDescription: String { defect.rawValue }
    }

    static let cases: [Case] = [
        Case(defect: .dropsDateType, group: "typeFidelity", check: "date 1 keeps its type") { try $0.typeFidelity() },
        Case(defect: .dropsDateType, group: "roundTrips", check: "read back Date reference date at once") { try $0.roundTrips() },
        Case(defect: .losesDoublePrecision, group: "roundTrips", check: "read back Double 0.1 at once") { try $0.roundTrips() },
        Case(defect: .keysMissOne, group: "keys", check: "keys() lists exactly the stored keys") { try $0.keys() },
        Case(defect: .ignoresCanonicalEquivalence, group: "keys", check: "a canonically equivalent key reads the same entry") { try $0.keys() },
        Case(defect: .nonAtomicBatch, group: "batches", check: "a batch with an empty key last leaves no trace") { try $0.batches() },
        Case(defect: .noChangeEvents, group: "changeEvents", check: "write a new key: 1 event(s) in order") { try $0.changeEvents() },
        Case(defect: .eventsForNoOps, group: "changeEvents", check: "write the value already stored: no event") { try $0.changeEvents() },
        Case(defect: .forgetsOnReopen, group: "persistence", check: "a value survives reopening") { try $0.persistence() },
        Case(defect: .losesConcurrentUpdates, group: "concurrency", check: "no lost update on distinct keys") { try $0.concurrency() },
        Case(defect: .tearsConcurrentReads, group: "concurrency", check: "no torn read of a key being replaced") { try $0.concurrency() },
        Case(defect: .acceptsEmptyKey, group: "errors", check: #"setValue(forKey: "") is rejected"#) { try $0.errors() },
        Case(defect: .removeAbsentThrows, group: "removal", check: "remove the same key again") { try $0.removal() },
    ]

    static func suite(for defect: BrokenProvider.Defect) -> DefaultsConformanceSuite {
        DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch]) { storage in
            BrokenProvider(defect, identifier: storage.identifier)
        }
    }

    @Test(arguments: cases)
    func brokenProviderFailsTheRightCheck(_ testCase: Case) throws {
        let suite = Self.suite(for: testCase.defect)
        do {
            let report = try testCase.run(suite)
            Issue.record("\(testCase.defect) passed \(report) but should fail [\(testCase.group)] \(testCase.check)")
        } catch let failure as ConformanceFailure {
            let item = failure.items.first { $0.group == testCase.group && $0.check.contains(testCase.check) }
            #expect(item != nil, "no failure named [\(testCase.group)] \(testCase.check) in:\n\(failure)")
            #expect(failure.provider == "BrokenProvider")
            if let item {
                // The message names the check and shows expected and actual.
                #expect(item.description.contains(testCase.check))
                #expect(item.description.contains("expected \(item.expected), got \(item.actual)"))
                #expect(!item.expected.isEmpty && !item.actual.isEmpty && item.expected != item.actual)
            }
        }
    }

    @Test func theSameHarnessWithoutADefectPassesEveryGroup() throws {
        let reports = try Self.suite(for: .none).run()
        #expect(reports.map(\.group) == ["roundTrips", "typeFidelity", "keys", "removal", "batches", "persistence", "concurrency", "changeEvents", "errors", "prefixQueries"])
        #expect(reports.allSatisfy { $0.skippedBecause == nil && $0.checks > 0 })
    }

    @Test func inMemoryProviderPassesAndSkipsPersistence() throws {
        let suite = DefaultsConformanceSuite(capabilities: InMemoryProvider().capabilities) { _ in InMemoryProvider() }
        let reports = try suite.run()
        let persistence = try #require(reports.first { $0.group == "persistence" })
        #expect(persistence.skippedBecause != nil)
        #expect(reports.filter { $0.skippedBecause == nil }.count == 9)
    }

    @Test func aFailureKeyIsNamedAndEveryFailureIsListed() throws {
        do {
            try Self.suite(for: .keysMissOne).run()
            Issue.record("keysMissOne passed the whole suite")
        } catch let failure as ConformanceFailure {
            #expect(failure.description.hasPrefix("BrokenProvider failed \(failure.items.count) conformance check(s):"))
            #expect(failure.description.components(separatedBy: "\n").count == failure.items.count + 1)
            let roundTripKeyFailure = try #require(failure.items.first { $0.check.contains("canonically equivalent keys appear once") })
            #expect(roundTripKeyFailure.group == "keys")
        }
    }

    /// From XCTest a group is called the same way; the thrown failure is what makes it fail.
    @Test func aFailureIsAThrownError() {
        #expect(throws: ConformanceFailure.self) { try Self.suite(for: .noChangeEvents).changeEvents() }
    }
}
