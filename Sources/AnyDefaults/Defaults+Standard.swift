import AnyDefaultsCore
import AnyDefaultsMemory
import Foundation
import Logging
import Synchronization

extension Defaults {
    /// The process-wide store: the one `@Default` properties and ``DefaultsModel`` subclasses use
    /// when no store is named, as `UserDefaults.standard` is for Foundation.
    ///
    /// Opened on first use from configuration (see ``makeStandard(environment:registry:)``):
    /// the `ANYDEFAULTS_STORE` environment variable, else the JSON file named by
    /// `ANYDEFAULTS_CONFIG`, else `userdefaults:` (the platform's `UserDefaults.standard`) when
    /// that backend is available, else an in-memory store. Set it to choose the store in code,
    /// before the properties that use it are created:
    ///
    /// ```swift
    /// Defaults.standard = Defaults(try SQLiteProvider(path: "settings.sqlite"))
    /// Defaults.useInMemoryStandard()          // tests and previews: nothing is persisted
    /// ```
    ///
    /// If the configuration is invalid, the error is logged and an in-memory store is used, so
    /// that nothing crashes; call ``makeStandard(environment:registry:)`` at startup to get the
    /// error instead.
    ///
    /// Inside ``withStandard(_:_:)`` (and in tests with the `.defaultsStore` trait of
    /// `AnyDefaultsTestTraits`) it is that scope's store, for the task and the tasks it starts:
    /// tests that run in parallel each get their own, and setting it there changes only the
    /// scope's store.
    public static var standard: Defaults {
        get {
            if let scoped = scopedStandard { return scoped.store.withLock { $0 } }
            // Opened under the lock, so that racing first uses open one store. (A provider factory
            // that reads `Defaults.standard` would wait for itself: factories must not.)
            return standardSlot.withLock { slot in
                if let store = slot { return store }
                let store = openStandard()
                slot = store
                return store
            }
        }
        set {
            if let scoped = scopedStandard { return scoped.store.withLock { $0 = newValue } }
            standardSlot.withLock { $0 = newValue }
        }
    }

    /// Makes ``standard`` a new in-memory store holding `values`, and returns it: the one-line
    /// development mode for tests and previews, where nothing must be persisted.
    ///
    /// ```swift
    /// Defaults.useInMemoryStandard(["onboarded": true])    // a preview, a debug launch
    /// ```
    ///
    /// Tests that run in parallel share the process-wide store: give each its own with the
    /// `.defaultsStore(.inMemory)` trait or ``withStandard(_:_:)`` (inside either, this replaces
    /// the scope's store only).
    ///
    /// The same from the environment: `ANYDEFAULTS_STORE=memory:`. SwiftUI previews
    /// (`XCODE_RUNNING_FOR_PREVIEWS=1`) use an in-memory store unless a store is configured.
    @discardableResult
    public static func useInMemoryStandard(_ values: [String: DefaultsValue] = [:]) -> Defaults {
        let store = Defaults(AnyDefaultsMemory.MemoryProvider(values))
        standard = store
        return store
    }

    /// Opens the store ``standard`` would open, throwing configuration errors.
    ///
    /// The first of: the `ANYDEFAULTS_STORE` variable; the JSON file named by `ANYDEFAULTS_CONFIG`
    /// (see `StoreConfiguration.resolve`); in a SwiftUI preview, `memory:`; else
    /// ``standardFallbackStore``.
    ///
    /// ```swift
    /// Defaults.standard = try Defaults.makeStandard()    // fail early on a bad configuration
    /// ```
    public static func makeStandard(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        registry: ProviderRegistry = .standard
    ) throws(DefaultsError) -> Defaults {
        try Defaults(configuration: standardConfiguration(environment: environment, registry: registry), registry: registry)
    }

    /// The store ``standard`` opens in the program named `appName` when it runs with
    /// `environment`: what a tool outside the app opens to reach the app's settings (the
    /// `anydefaults --app NAME` option).
    ///
    /// The same resolution as ``makeStandard(environment:registry:)``, with the fallback
    /// `userdefaults:` (the standard suite, which belongs to the running program) made the suite
    /// of `appName`: on Apple platforms the app's bundle identifier, elsewhere its bundle
    /// identifier or, without one, its process name (what Foundation names the standard suite
    /// after).
    ///
    /// ```swift
    /// let settings = try Defaults(configuration: Defaults.standardConfiguration(forApp: "com.example.app"))
    /// ```
    public static func standardConfiguration(
        forApp appName: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        registry: ProviderRegistry = .standard
    ) throws(DefaultsError) -> StoreConfiguration {
        var configuration = try standardConfiguration(environment: environment, registry: registry)
        if configuration.scheme == "userdefaults", configuration.location.isEmpty {
            configuration.location = appName
        }
        return configuration
    }

    /// Which store ``makeStandard(environment:registry:)`` opens.
    static func standardConfiguration(environment: [String: String], registry: ProviderRegistry) throws(DefaultsError) -> StoreConfiguration {
        if let configured = try StoreConfiguration.resolve(environment: environment) { return configured }
        return try StoreConfiguration(parsing: environment[previewVariable] == "1" ? "memory:" : standardFallbackStore(registry: registry))
    }

    /// The store ``standard`` opens when nothing is configured: `userdefaults:` (the platform's
    /// `UserDefaults.standard`, what code moving from `UserDefaults` expects) when that backend
    /// is registered, else `memory:`.
    public static func standardFallbackStore(registry: ProviderRegistry = .standard) -> String {
        registry.registered.contains { $0.scheme == "userdefaults" } ? "userdefaults:" : "memory:"
    }

    // MARK: Internals

    private static let standardSlot = Mutex<Defaults?>(nil)
    private static let previewVariable = "XCODE_RUNNING_FOR_PREVIEWS"
    private static let logger = Logger(label: "AnyDefaults")

    private static func openStandard() -> Defaults {
        do {
            let store = try makeStandard()
            if !store.provider.capabilities.contains(.persistent) {
                logger.notice("Defaults.standard keeps settings in memory only; set ANYDEFAULTS_STORE or Defaults.standard to persist them.")
            }
            return store
        } catch {
            logErrors(error)
            logger.warning("Defaults.standard falls back to an in-memory store because of the error above.")
            return Defaults(AnyDefaultsMemory.MemoryProvider())
        }
    }
}
