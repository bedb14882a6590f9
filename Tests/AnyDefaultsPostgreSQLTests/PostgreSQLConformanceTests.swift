import AnyDefaults
import AnyDefaultsTesting
import Foundation
import Testing
import TestSupport

/// The conformance suite against a real server (the shared throwaway cluster), plain and cached.
/// Each group runs in a namespace of its own, named by the suite's storage identifier (`{id}`), so
/// a reopened instance and the suite's child processes (`TestChild conformance`, which
/// opens the same store string through `ProviderRegistry.standard`) find the same store: restarts,
/// several processes, kills in the middle of a batch and external changes run too.
private func suite(cached: Bool) throws -> DefaultsConformanceSuite {
    // The namespace ends in the placeholder, filled per group; the cluster escapes only its prefix.
    let store = try PostgreSQLCluster.shared().storeString(namespace: "conformance-") + "{id}&cache=\(cached ? "on" : "off")"
    return try DefaultsConformanceVerifier(registry: .standard).suite(
        for: store, capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges],
        child: .product(named: "TestChild", arguments: ["conformance"], environment: [DefaultsConformanceVerifier.storeVariable: store]))
}

@Suite(.ownThreads) struct PostgreSQLConformanceTests {
    @Test(arguments: DefaultsConformanceSuite.Group.allCases)
    func plain(_ group: DefaultsConformanceSuite.Group) throws { note(try suite(cached: false).run(group), "plain") }

    @Test(arguments: DefaultsConformanceSuite.Group.allCases)
    func cached(_ group: DefaultsConformanceSuite.Group) throws { note(try suite(cached: true).run(group), "cached") }

    /// Prints how long a group took when `CONFORMANCE_TIMINGS` is set, as ConformanceTests does.
    private func note(_ report: ConformanceReport, _ variant: String) {
        guard ProcessInfo.processInfo.environment["CONFORMANCE_TIMINGS"] != nil else { return }
        print("conformance timing \(variant) \(report.group) \(String(format: "%.2f", report.seconds)) s")
    }
}
