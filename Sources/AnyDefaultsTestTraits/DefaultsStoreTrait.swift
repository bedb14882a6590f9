import AnyDefaults
import Testing

/// A Swift Testing trait that gives each test its own `Defaults.standard`, so that tests using
/// `@Default` properties, ``DefaultsModel`` subclasses, `@ObservableDefaults` models or
/// `@PublishedDefault` properties on the process-wide store can run in parallel.
///
/// ```swift
/// import AnyDefaultsTestTraits
/// import Testing
///
/// @Test(.defaultsStore(.inMemory)) func onboardingShowsOnce() {
///     let preferences = PlayerPreferences()     // @Default("onboarded") var onboarded = false
///     preferences.onboarded = true
///     #expect(Defaults.standard.bool(forKey: "onboarded"))
/// }
///
/// @Suite(.defaultsStore(.inMemory(["volume": 0.2])))    // every test of the suite, each its own
/// struct PlayerTests { … }
/// ```
///
/// Each test — and each case of a parameterized test — runs inside
/// `Defaults.withStandard(_:_:)` with a new store made by ``Store``. On a suite, the trait applies
/// to every test in it, nested suites included.
public struct DefaultsStoreTrait: TestTrait, SuiteTrait, TestScoping {
    /// How each test's store is made.
    public struct Store: Sendable {
        let make: @Sendable () throws -> Defaults

        /// A new, empty in-memory store for each test.
        public static var inMemory: Store { .inMemory([:]) }

        /// A new in-memory store holding `values` for each test.
        public static func inMemory(_ values: [String: DefaultsValue]) -> Store {
            Store { Defaults(MemoryProvider(values)) }
        }

        /// A store made by `make` for each test: any backend, or a store with defaults
        /// registered. A thrown error fails the test.
        ///
        /// ```swift
        /// @Test(.defaultsStore(.custom { Defaults(MemoryProvider(), cached: false) }))
        /// ```
        public static func custom(_ make: @escaping @Sendable () throws -> Defaults) -> Store {
            Store(make: make)
        }
    }

    let store: Store

    /// On a suite, the trait reaches every test in it.
    public var isRecursive: Bool { true }

    /// A scope for each test case (each run of a test function), none for a suite itself, so
    /// that no two tests share a store.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> DefaultsStoreTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await Defaults.withStandard(try store.make()) {
            try await function()
        }
    }
}

extension Trait where Self == DefaultsStoreTrait {
    /// Gives each test its own `Defaults.standard`, made by `store`.
    ///
    /// ```swift
    /// @Test(.defaultsStore(.inMemory)) func volumeIsRemembered() { … }
    /// ```
    public static func defaultsStore(_ store: DefaultsStoreTrait.Store) -> Self {
        DefaultsStoreTrait(store: store)
    }
}
