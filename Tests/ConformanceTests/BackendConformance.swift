import AnyDefaultsCore
import AnyDefaultsTesting

/// The conformance suite on one backend twice: as it is, and wrapped in a `CachingProvider`,
/// which must keep the contract of the provider it wraps.
struct BackendConformance: Sendable {
    typealias Group = DefaultsConformanceSuite.Group

    let plain: DefaultsConformanceSuite
    let cached: DefaultsConformanceSuite

    init<Provider: DefaultsProvider>(
        capabilities: DefaultsCapabilities,
        cleanup: DefaultsConformanceSuite.Cleanup? = nil,
        open: @escaping @Sendable (ConformanceStorage) throws -> Provider
    ) {
        plain = DefaultsConformanceSuite(capabilities: capabilities, cleanup: cleanup) { try open($0) }
        cached = DefaultsConformanceSuite(capabilities: capabilities, cleanup: cleanup) { try open($0).cached() }
    }
}
