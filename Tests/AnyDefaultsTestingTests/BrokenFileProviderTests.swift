import AnyDefaultsCore
import AnyDefaultsTesting
import BrokenProviders
import Foundation
import TestSupport
import Testing

/// The suite's teeth: every deliberately broken provider (one per way real backends break the
/// contract, see `Defect`) fails the check named for its defect, by its stable identifier, and the
/// same provider without a defect passes every group, child-process groups included.
@Suite(.ownThreads) struct BrokenFileProviderTests {
    /// The broken providers run whole conformance groups, with child processes and kills: about a
    /// third of the package's test time, which would take CI past its limit. They run when
    /// `ANYDEFAULTS_TEETH` is set (not "0"): `ANYDEFAULTS_TEETH=1 swift test --skip-build --filter
    /// AnyDefaultsTestingTests` — run them whenever the suite (Sources/AnyDefaultsTesting) changes.
    static let teeth: Bool = {
        let value = ProcessInfo.processInfo.environment["ANYDEFAULTS_TEETH"] ?? ""
        return !value.isEmpty && value != "0"
    }()
    static let skipped = Comment(rawValue: "the broken providers run with ANYDEFAULTS_TEETH=1 (see Docs/Conformance.md)")

    static func suite(_ defect: Defect, options: DefaultsConformanceSuite.Options = .init()) -> DefaultsConformanceSuite {
        DefaultsConformanceSuite(
            capabilities: defect.suiteClaimsCapabilities ? .all : nil, options: options,
            child: .product(named: "TestChild", arguments: ["conformance-broken", defect.rawValue])
        ) { storage in try BrokenFileProvider(defect, directory: storage.directory) }
    }

    /// Runs the group that should catch `defect` (on a thread of its own: see `BlockingWork`); the
    /// identifiers of the failed checks, or `nil` if it passed.
    static func failedChecks(_ defect: Defect, options: DefaultsConformanceSuite.Options = .init()) async throws -> (checks: Set<ConformanceCheck>, failure: ConformanceFailure?) {
        let suite = suite(defect, options: options)
        do {
            let report = try await BlockingWork.run { try suite.report(defect.group) }
            #expect(!report.isSkipped, "\(defect): the group was skipped: \(report)")
            return ([], nil)
        } catch let failure as ConformanceFailure {
            return (Set(failure.items.map(\.id)), failure)
        }
    }

    /// `TEETH_DEFECTS=a,b` runs only the defects named (a comma-separated list of `Defect` raw values).
    static let selected: [Defect] = {
        guard let names = ProcessInfo.processInfo.environment["TEETH_DEFECTS"], !names.isEmpty else { return Defect.allCases }
        return names.split(separator: ",").compactMap { Defect(rawValue: String($0)) }
    }()
    static let deterministic = selected.filter { $0 != .none && !$0.isProbabilistic }
    static let probabilistic = selected.filter(\.isProbabilistic)

    @Test func thereAreAtLeastFortyKindsOfBrokenProvider() {
        #expect(Defect.allCases.count - 1 >= 40)
        // Every group of the suite has teeth.
        let groups = Set(Defect.allCases.compactMap { $0 == .none ? nil : $0.group })
        #expect(groups == Set(DefaultsConformanceSuite.Group.allCases))
    }

    @Test(.enabled(if: teeth, skipped), arguments: deterministic)
    func aBrokenProviderFailsTheCheckNamedForItsDefect(_ defect: Defect) async throws {
        let (checks, failure) = try await Self.failedChecks(defect)
        #expect(!checks.isDisjoint(with: defect.caught), "\(defect) should fail \(defect.caught), failed \(checks.map(\.rawValue).sorted()):\n\(failure.map { "\($0)" } ?? "it passed")")
        // The suite's own checks do not fail: the defect, not the harness, is what was caught.
        #expect(!checks.contains(.suiteCompleted) && !checks.contains(.suiteChildProcess) || defect == .recursesDeeplyOnSmallStacks,
            "\(failure.map { "\($0)" } ?? "")")
    }

    /// Races and kills are caught by chance: each is run several times and must be caught every
    /// time. (`TEETH_RUNS=N` runs each N times and prints the catch rate, for measuring under load.)
    @Test(.enabled(if: teeth, skipped), arguments: probabilistic)
    func aRacyDefectIsCaughtEveryTime(_ defect: Defect) async throws {
        let runs = ProcessInfo.processInfo.environment["TEETH_RUNS"].flatMap(Int.init) ?? 3
        var options = DefaultsConformanceSuite.Options()
        // A kill lands in the vulnerable part of a write (here, the file being rewritten) by chance,
        // and less often on a loaded machine, where the rest of a batch takes longer: 18 kills a
        // run instead of 6 (a miss was seen once in 3 runs at a load average of 13).
        if defect.group == .crashAtomicity { options.stress.crashes *= 3 }
        var caught = 0
        for _ in 0..<runs {
            let (checks, failure) = try await Self.failedChecks(defect, options: options)
            if !checks.isDisjoint(with: defect.caught) { caught += 1 } else {
                Issue.record("\(defect) was not caught by \(defect.caught); failed \(checks.map(\.rawValue).sorted()) \(failure.map { "\($0)" } ?? "")")
            }
        }
        if runs > 3 { print("catch rate of \(defect): \(caught)/\(runs)") }
    }

    @Test(.enabled(if: teeth, skipped), arguments: DefaultsConformanceSuite.Group.allCases)
    func theReferenceProviderPassesEveryGroup(_ group: DefaultsConformanceSuite.Group) async throws {
        let suite = Self.suite(.none)
        let report = try await BlockingWork.run { try suite.report(group) }
        #expect(!report.isSkipped, "\(report)")
        #expect(report.checks > 0)
    }

    @Test(.enabled(if: teeth, skipped)) func theModelCheckShrinksToAShortSequenceWithItsSeed() async throws {
        var options = DefaultsConformanceSuite.Options()
        options.seed = 20_240_501
        let (_, failure) = try await Self.failedChecks(.dropsWritesAfterRemoveAllOnReopen, options: options)
        let item = try #require(failure?.items.first { $0.id == .modelMatchesReference })
        let shrunk = try #require(item.check.range(of: "shrunk to ")).upperBound
        let steps = Int(item.check[shrunk...].prefix { $0.isNumber }) ?? 99
        #expect(steps <= 6, "\(item)")
        #expect(item.check.contains("removeAll()") && item.check.contains("reopen"), "\(item)")
        #expect(failure?.seed == 20_240_501)
        // The same seed reproduces the same failure.
        let (_, again) = try await Self.failedChecks(.dropsWritesAfterRemoveAllOnReopen, options: options)
        #expect(again?.items.first { $0.id == .modelMatchesReference }?.check == item.check)
    }
}
