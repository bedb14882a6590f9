import AnyDefaultsTesting
import Testing
import TestSupport

/// The conformance suite on every backend of the catalog (TestBackend.all), each group plain and
/// cached, with the capabilities the catalog says the backend claims.
@Suite struct BackendConformanceTests {
    /// Every backend but UserDefaults, whose groups run one at a time (below).
    static let concurrent = TestBackend.all.filter { $0 != .userDefaults }

    @Test(arguments: concurrent, BackendConformance.Group.allCases)
    func plain(_ backend: TestBackend, _ group: BackendConformance.Group) async throws {
        try await BackendConformance(backend).run(group, cached: false)
    }

    @Test(arguments: concurrent, BackendConformance.Group.allCases)
    func cached(_ backend: TestBackend, _ group: BackendConformance.Group) async throws {
        try await BackendConformance(backend).run(group, cached: true)
    }
}

/// Each group runs on a uniquely named suite in this process's real preferences directory; the
/// cleanup deletes the suite (its file, on Linux), so no settings are left behind. One group at a
/// time: every suite of this process shares the preferences directory's lock, and several groups
/// rewriting 70 000-entry suites at once kept it past the lock timeout (`busy`).
@Suite(.serialized) struct UserDefaultsConformanceTests {
    @Test(arguments: BackendConformance.Group.allCases)
    func plain(_ group: BackendConformance.Group) async throws {
        try await BackendConformance(.userDefaults).run(group, cached: false)
    }

    @Test(arguments: BackendConformance.Group.allCases)
    func cached(_ group: BackendConformance.Group) async throws {
        try await BackendConformance(.userDefaults).run(group, cached: true)
    }
}
