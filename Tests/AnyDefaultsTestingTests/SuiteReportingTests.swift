import AnyDefaultsCore
import AnyDefaultsMemory
import AnyDefaultsTesting
import AnyDefaultsTestingXCTest
import BrokenProviders
import Foundation
import Testing
import TestSupport
import XCTest

/// How the suite reports: skipped groups never pass, failures are readable and name stable
/// checks, capabilities are checked, every check is documented.
@Suite(.ownThreads) struct SuiteReportingTests {
    static let memory = DefaultsConformanceSuite { _ in MemoryProvider() }

    // MARK: Skipping

    @Test func aSkippedGroupCancelsTheSwiftTestingTaskItRunsIn() async throws {
        let task = Task { try Self.memory.persistence() }
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(task.isCancelled)
    }

    @Test func outsideATaskASkippedGroupThrowsConformanceSkipped() throws {
        let outcome = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                try Self.memory.multiProcess()
                outcome.record("returned")
            } catch let skipped as ConformanceSkipped {
                outcome.record("\(skipped.report.group): \(skipped)")
            } catch {
                outcome.record("threw \(error)")
            }
            done.signal()
        }
        done.wait()
        #expect(outcome.all == ["multiProcess: conformance group multiProcess skipped: the provider does not claim [multiProcess]"])
    }

    @Test func xcTestSkipsAGroupAndRunsTheOthers() throws {
        #expect(throws: XCTSkip.self) { try Self.memory.runInXCTest(.crashAtomicity) }
        let report = try Self.memory.runInXCTest(.keys)
        #expect(!report.isSkipped && report.checks > 0)
    }

    @Test func skipReasonsNameWhatIsMissing() throws {
        let withoutChild = DefaultsConformanceSuite(capabilities: .all) { _ in MemoryProvider() }
        #expect(withoutChild.skipReason(.restart)?.contains("no child process") == true)
        #expect(withoutChild.skipReason(.keys) == nil)
        #expect(Self.memory.skipReason(.persistence) == "the provider does not claim [persistent]")
        #expect(try Self.memory.report(.restart).isSkipped)
    }

    // MARK: Capabilities

    @Test func capabilitiesAreReadFromTheProviderAndCheckedAgainstAClaim() throws {
        #expect(Self.memory.capabilities == [.atomicBatch])
        let overclaimed = DefaultsConformanceSuite(capabilities: [.atomicBatch, .persistent]) { _ in MemoryProvider() }
        do {
            try overclaimed.checkCapabilities()
            Issue.record("a provider reporting less than claimed passed")
        } catch let failure as ConformanceFailure {
            #expect(failure.checks == [.capabilitiesAsClaimed])
            #expect(failure.items[0].expected == "[persistent, atomicBatch]" && failure.items[0].actual == "[atomicBatch]")
        }
    }

    // MARK: Messages

    /// A failure of `defect`'s group.
    static func failure(_ defect: Defect) async throws -> ConformanceFailure {
        do {
            _ = try await BlockingWork.run { try BrokenFileProviderTests.suite(defect).report(defect.group) }
        } catch let failure as ConformanceFailure {
            return failure
        }
        throw CancellationError()
    }

    @Test func longKeysAreCutWithTheirLength() async throws {
        let failure = try await Self.failure(.truncatesLongKeys)
        let item = try #require(failure.items.first { $0.id == .keysLong && $0.key?.utf8.count ?? 0 > 16_000 })
        #expect(item.description.contains(#"(key "long.kkkkkkkkkk"#))
        #expect(item.description.contains(#"kkkk"… (16389 UTF-8 bytes))"#), "\(item)")
        #expect(item.description.count < 2_000)
    }

    @Test func canonicallyEquivalentSpellingsAreShownEscapedAndADuplicateIsNamed() async throws {
        let failure = try await Self.failure(.ignoresCanonicalEquivalence)
        let text = failure.description
        #expect(text.contains(#""canon.0.cafe\u{301}""#) || text.contains(#""canon.0.caf\u{E9}""#), "\(text)")
        let duplicate = try #require(failure.items.first { $0.actual.contains("listed 2 times") })
        #expect(duplicate.actual.contains(#"(as ""#), "\(duplicate)")
    }

    @Test func valuesShowWhereTheyDiffer() async throws {
        let failure = try await Self.failure(.nestedNegativeZeroCollapsed)
        let item = try #require(failure.items.first { $0.id == .roundTripsNested && $0.check.contains("-0.0 and 0.0") })
        #expect(item.actual.contains("they differ at [0]: .double(0.0 [0x0]) instead of .double(-0.0 [0x8000000000000000])"), "\(item)")
    }

    @Test func everyCheckIsDocumented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Docs/Conformance.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for check in ConformanceCheck.allCases {
            #expect(text.contains("| `\(check.rawValue)` |"), "Docs/Conformance.md does not list \(check)")
        }
        for group in DefaultsConformanceSuite.Group.allCases {
            #expect(text.contains("`\(group.rawValue)`"), "Docs/Conformance.md does not list the group \(group)")
            #expect(!ConformanceCheck.checks(in: group).isEmpty)
        }
    }

    // MARK: The verifier

    @Test func aCustomSchemeIsVerifiedFromAStoreString() throws {
        let registry = ProviderRegistry()
        registry.register(scheme: "broken", summary: "a test store", location: .required("DIR")) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            try BrokenFileProvider(.none, directory: URL(fileURLWithPath: configuration.location))
        }
        registry.register(scheme: "forgetful", summary: "a broken test store", location: .required("DIR")) { (configuration: StoreConfiguration) throws(DefaultsError) -> any DefaultsProvider in
            try BrokenFileProvider(.forgetsOnReopen, directory: URL(fileURLWithPath: configuration.location))
        }
        var options = DefaultsConformanceSuite.Options()
        options.seed = 77
        let verifier = DefaultsConformanceVerifier(registry: registry, options: options)
        let storage = ConformanceStorage(directory: URL(fileURLWithPath: "/tmp/x"), identifier: "id-1")
        let placed = try DefaultsConformanceVerifier.place("broken:{dir}", in: storage, registry: registry)
        #expect(placed.location == "/tmp/x")
        let named = try DefaultsConformanceVerifier.place("broken:anything", in: storage, registry: registry)
        #expect(named.location == "id-1")

        let suite = try verifier.suite(for: "broken:{dir}")
        #expect(try suite.report(.persistence).checks > 0)
        let forgetful = try verifier.suite(for: "forgetful:{dir}")
        #expect(throws: ConformanceFailure.self) { try forgetful.report(.persistence) }
        #expect(throws: DefaultsError.self) { try verifier.suite(for: "redis:localhost") }
    }
}
