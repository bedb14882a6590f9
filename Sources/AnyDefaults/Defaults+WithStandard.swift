import AnyDefaultsCore
import Synchronization

extension Defaults {
    /// Runs `body` with `store` as ``standard`` for the current task and the tasks it starts
    /// (`Task { }`, `async let`, task groups), leaving every other task's `standard` alone: the
    /// way to give a test its own store while other tests run in parallel.
    ///
    /// ```swift
    /// @Test func onboardingShowsOnce() {
    ///     Defaults.withStandard(Defaults(MemoryProvider())) {
    ///         let preferences = PlayerPreferences()      // its @Default properties use this store
    ///         preferences.onboarded = true
    ///     }
    /// }
    /// ```
    ///
    /// With Swift Testing, the `.defaultsStore(.inMemory)` trait of the `AnyDefaultsTestTraits`
    /// product does this for every test (or every case of a parameterized test).
    ///
    /// Inside `body`, setting ``standard`` (or calling ``useInMemoryStandard(_:)``) replaces the
    /// store of this scope only. `@Default` properties, ``DefaultsModel`` subclasses and
    /// `@ObservableDefaults` models take `standard` when they are created, so create them inside
    /// `body`; a `Task.detached` or a thread of its own does not inherit the store.
    public static func withStandard<Result, Failure: Error>(
        _ store: Defaults, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = $scopedStandard.withValue(ScopedStandard(store)) {
            do throws(Failure) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Runs `body` with `store` as ``standard`` for the current task and the tasks it starts;
    /// the asynchronous form of ``withStandard(_:_:)``.
    ///
    /// ```swift
    /// try await Defaults.withStandard(Defaults(MemoryProvider())) {
    ///     try await syncSettings()
    /// }
    /// ```
    public static func withStandard<Result, Failure: Error>(
        _ store: Defaults,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = await $scopedStandard.withValue(ScopedStandard(store)) {
            do throws(Failure) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// The store of the innermost ``withStandard(_:_:)`` scope of this task, if any. A box, so
    /// that setting ``standard`` inside the scope replaces the scope's store and no other.
    @TaskLocal static var scopedStandard: ScopedStandard?
}

/// The store of one ``Defaults/withStandard(_:_:)`` scope.
final class ScopedStandard: Sendable {
    let store: Mutex<Defaults>

    init(_ store: Defaults) {
        self.store = Mutex(store)
    }
}
