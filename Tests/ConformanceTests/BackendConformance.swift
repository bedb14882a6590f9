import AnyDefaults
import AnyDefaultsTesting
import Foundation
import TestSupport

/// The conformance suite on one backend twice: as it is, and wrapped in a `CachingProvider`,
/// which must keep the contract of the provider it wraps. Providers are opened by store string
/// through `ProviderRegistry.standard` — `{dir}` and `{id}` filled with each group's storage —
/// here and in the child process (`TestChild conformance`) alike.
struct BackendConformance: Sendable {
    typealias Group = DefaultsConformanceSuite.Group

    let store: String
    let capabilities: DefaultsCapabilities
    let cleanup: DefaultsConformanceSuite.Cleanup?

    init(store: String, capabilities: DefaultsCapabilities, cleanup: DefaultsConformanceSuite.Cleanup? = nil) {
        self.store = store
        self.capabilities = capabilities
        self.cleanup = cleanup
    }

    /// A backend of the catalog: its store in each group's storage (`{dir}`, and the group's
    /// `{id}` as the suite of a `userdefaults:` store, deleted afterwards).
    init(_ backend: TestBackend) {
        var cleanup: DefaultsConformanceSuite.Cleanup?
        if backend == .userDefaults {
            cleanup = { storage in try UserDefaultsProvider.removeSuite(named: storage.identifier) }
        }
        var store = backend.store(in: "{dir}", suite: "{id}")
        // Every suite of this process shares the preferences directory's lock: with all groups
        // running at once, rewriting suites of 70 000 entries, a writer can wait longer than the
        // default 10 s (and fail with `busy`).
        if backend == .userDefaults { store += "?locktimeout=120" }
        self.init(store: store, capabilities: backend.capabilities, cleanup: cleanup)
    }

    /// Runs `group` on the backend, plain or cached, on a thread of its own (see `BlockingWork`);
    /// a group the backend cannot run ends the test as skipped.
    func run(_ group: Group, cached: Bool) async throws {
        let suite = try suite(cache: cached)
        let report = try await BlockingWork.run { try suite.report(group) }
        Self.note(report, cached ? "cached" : "plain")
        // A skipped group: `run` cancels the test, which Swift Testing shows as skipped.
        if report.isSkipped { try suite.run(group) }
    }

    private func suite(cache: Bool) throws -> DefaultsConformanceSuite {
        let store = self.store + (self.store.contains("?") ? "&" : "?") + "cache=\(cache ? "on" : "off")"
        return try DefaultsConformanceVerifier(registry: .standard).suite(
            for: store, capabilities: capabilities,
            child: .product(named: "TestChild", arguments: ["conformance"], environment: [DefaultsConformanceVerifier.storeVariable: store]),
            cleanup: cleanup)
    }

    /// Prints how long a group took when `CONFORMANCE_TIMINGS` is set (for Docs/Conformance.md's
    /// measurements: `CONFORMANCE_TIMINGS=1 swift test --skip-build --no-parallel --filter BackendConformanceTests`).
    static func note(_ report: ConformanceReport, _ variant: String) {
        guard ProcessInfo.processInfo.environment["CONFORMANCE_TIMINGS"] != nil else { return }
        print("conformance timing \(variant) \(report.group) \(String(format: "%.2f", report.seconds)) s")
    }
}
