import AnyDefaultsTesting
import AnyDefaultsUserDefaults
import Testing

/// Each group runs on a uniquely named suite in this process's real preferences directory; the
/// cleanup deletes the suite (its file, on Linux), so no settings are left behind.
private let userDefaults = BackendConformance(
    store: "userdefaults:{id}", capabilities: UserDefaultsProvider.supportedCapabilities,
    cleanup: { storage in try UserDefaultsProvider.removeSuite(named: storage.identifier) })

// One group at a time: every suite of this process shares the preferences directory's lock, and
// several groups rewriting 70 000-entry suites at once kept it past the lock timeout (`busy`).
@Suite(.serialized) struct UserDefaultsConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) async throws { try await userDefaults.run(group, cached: false) }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) async throws { try await userDefaults.run(group, cached: true) }
}
