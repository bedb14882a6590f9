import AnyDefaultsCore
import AnyDefaultsTesting
import Foundation
import Synchronization
import Testing
import TestSupport

/// A provider that hangs (a deadlock, a wait without end) fails the group it hangs in, naming the
/// call, once the call has not returned for the suite's timeout; it does not hang the suite.
@Suite(.ownThreads) struct SuiteHangTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var defect: BrokenProvider.Defect
        var group: DefaultsConformanceSuite.Group
        /// The calls one of which is named as hung.
        var calls: [String]
        var testDescription: String { "\(defect.rawValue) in \(group)" }
    }

    static let cases: [Case] = [
        Case(defect: .removeAllHangs, group: .removal, calls: ["removeAll()"]),
        Case(defect: .concurrentWritesDeadlock, group: .concurrency, calls: ["setValue(_:forKey:)", "apply(_:)"]),
        Case(defect: .asyncWriteHangs, group: .batches, calls: ["setValueAsync(_:forKey:)"]),
        Case(defect: .releaseHangs, group: .roundTrips, calls: ["releasing the last reference to the provider"]),
        Case(defect: .cancelHangs, group: .changeEvents, calls: ["cancelling an observation", "releasing an observation"]),
    ]

    static let timeout = Duration.seconds(2)

    static func suite(for defect: BrokenProvider.Defect) -> DefaultsConformanceSuite {
        DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch], options: .init(timeout: timeout)) { storage in
            BrokenProvider(defect, identifier: storage.identifier)
        }
    }

    @Test(arguments: cases)
    func aHungCallFailsItsGroupAfterTheTimeout(_ testCase: Case) throws {
        // On a thread of its own, waited for 30 s at most: a suite that hangs fails this test
        // instead of hanging it (the defect blocks for BrokenProvider.hang, 120 s).
        let outcome = Mutex<Result<ConformanceReport, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { try Self.suite(for: testCase.defect).report(testCase.group) }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + 30) == .success, let result = outcome.withLock({ $0 }) else {
            Issue.record("the suite did not return within 30 s on \(testCase.defect)")
            return
        }
        do {
            let report = try result.get()
            Issue.record("\(testCase.defect) passed \(report) but hangs")
        } catch let failure as ConformanceFailure {
            let hung = failure.items.first { $0.id == .suiteCompleted }
            #expect(failure.provider == "BrokenProvider")
            #expect(hung.map { item in testCase.calls.contains { item.check.hasPrefix($0) } } == true, "\(failure)")
            #expect(hung?.expected == "it returns within \(Self.timeout)", "\(failure)")
        }
    }

    /// The same groups on the provider without a defect pass: the watch does not take a slow
    /// group for a hung call.
    @Test(arguments: Set(cases.map(\.group)).sorted { $0.rawValue < $1.rawValue })
    func theGroupsPassWithoutTheDefect(_ group: DefaultsConformanceSuite.Group) async throws {
        let report = try await BlockingWork.run { try Self.suite(for: .none).report(group) }
        #expect(report.checks > 0)
    }
}
