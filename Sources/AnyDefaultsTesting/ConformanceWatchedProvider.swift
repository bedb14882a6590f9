import AnyDefaultsCore
import Synchronization

/// The provider under test, with every call noted in a ``ConformanceCallWatch`` while it runs:
/// what lets the suite tell a hung call from a slow group. It forwards every requirement of
/// ``DefaultsProvider``, those with a default implementation too, so that the provider's own
/// implementations are the ones tested, and it changes nothing the suite observes: releasing it
/// releases the provider, cancelling an observation it returned cancels the provider's (which
/// stays alive, as the caller's would), releasing one releases it. Each of these is a watched
/// call too (a `deinit` may wait for a thread of the provider's).
final class ConformanceWatchedProvider: DefaultsProvider {
    /// The provider, in a box this wrapper holds one reference to, released by its `deinit`
    /// while watched. Unmanaged, so that a call reaches the provider without a lock: a lock here
    /// would order the concurrency checks' threads, whose calls must overlap. A call holds the
    /// wrapper, so the box is there for as long as a call runs.
    private let box: Unmanaged<Box>
    private let watch: ConformanceCallWatch
    /// The provider's observations whose wrapping observation was cancelled: kept, as the
    /// caller keeps a cancelled observation, so that a provider whose `cancel()` does nothing
    /// (and whose observations end only when released) still fails the checks of `cancel()`.
    private let cancelled = Mutex<[DefaultsObservation]>([])

    private final class Box: Sendable {
        let provider: any DefaultsProvider
        init(_ provider: any DefaultsProvider) { self.provider = provider }
    }

    init(_ provider: any DefaultsProvider, watch: ConformanceCallWatch) {
        box = .passRetained(Box(provider))
        self.watch = watch
    }

    deinit {
        let id = watch.begin(.release)
        do {
            let kept = cancelled.withLock { kept in
                defer { kept = [] }
                return kept
            }
            _ = consume kept
        }
        box.release()
        watch.end(id)
    }

    private var provider: any DefaultsProvider {
        box._withUnsafeGuaranteedRef { $0.provider }
    }

    var capabilities: DefaultsCapabilities { watch.track(.capabilities) { provider.capabilities } }
    var storeIdentity: DefaultsStoreIdentity? { watch.track(.storeIdentity) { provider.storeIdentity } }
    var sharedChangeCounter: SharedChangeCounter? { watch.track(.sharedChangeCounter) { provider.sharedChangeCounter } }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        try watch.track(.value) { () throws(DefaultsError) in try provider.value(forKey: key) }
    }

    func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try watch.track(.setValue) { () throws(DefaultsError) in try provider.setValue(value, forKey: key) }
    }

    func removeValue(forKey key: String) throws(DefaultsError) {
        try watch.track(.removeValue) { () throws(DefaultsError) in try provider.removeValue(forKey: key) }
    }

    func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        try watch.track(.removeValueIfPresent) { () throws(DefaultsError) in try provider.removeValueIfPresent(forKey: key) }
    }

    func keys() throws(DefaultsError) -> [String] {
        try watch.track(.keys) { () throws(DefaultsError) in try provider.keys() }
    }

    func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try watch.track(.allValues) { () throws(DefaultsError) in try provider.allValues() }
    }

    func keys(withPrefix prefix: String) throws(DefaultsError) -> [String] {
        try watch.track(.keysWithPrefix) { () throws(DefaultsError) in try provider.keys(withPrefix: prefix) }
    }

    func allValues(withPrefix prefix: String) throws(DefaultsError) -> [String: DefaultsValue] {
        try watch.track(.allValuesWithPrefix) { () throws(DefaultsError) in try provider.allValues(withPrefix: prefix) }
    }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        try watch.track(.apply) { () throws(DefaultsError) in try provider.apply(changes) }
    }

    func removeAll() throws(DefaultsError) {
        try watch.track(.removeAll) { () throws(DefaultsError) in try provider.removeAll() }
    }

    func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        try watch.track(.removeValuesIfUnchanged) { () throws(DefaultsError) in try provider.removeValues(ifUnchanged: expected) }
    }

    func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        try watch.track(.applyIfUnchanged) { () throws(DefaultsError) in try provider.apply(changes, ifUnchanged: expected) }
    }

    /// The provider's observation behind one of the wrapper's own, which tells a cancel from a
    /// release (a provider that keeps released observations must still fail
    /// `changeEvents.released`, and one whose `cancel()` does nothing `changeEvents.cancelOne`).
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        let inner = Mutex<DefaultsObservation?>(watch.track(.observe) { provider.observe(handler) })
        let outer = Mutex(WeakObservation())
        let observation = DefaultsObservation { [watch, weak self] in
            // Weak references to an object read `nil` once its deinit runs: nil here is a release.
            let isCancel = outer.withLock { $0.observation != nil }
            let id = watch.begin(isCancel ? .cancelObservation : .releaseObservation)
            do {
                let taken = inner.withLock { $0.take() }
                if isCancel, let taken {
                    taken.cancel()
                    self?.cancelled.withLock { $0.append(taken) }
                }
            }
            watch.end(id)
        }
        outer.withLock { $0.observation = observation }
        return observation
    }

    private struct WeakObservation {
        weak var observation: DefaultsObservation?
    }

    func synchronize() throws(DefaultsError) {
        try watch.track(.synchronize) { () throws(DefaultsError) in try provider.synchronize() }
    }

    func makeDurable() throws(DefaultsError) {
        try watch.track(.makeDurable) { () throws(DefaultsError) in try provider.makeDurable() }
    }

    func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        let id = watch.begin(.setValueAsync)
        defer { watch.end(id) }
        try await provider.setValueAsync(value, forKey: key)
    }

    func removeValueAsync(forKey key: String) async throws(DefaultsError) {
        let id = watch.begin(.removeValueAsync)
        defer { watch.end(id) }
        try await provider.removeValueAsync(forKey: key)
    }

    func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError) {
        let id = watch.begin(.applyAsync)
        defer { watch.end(id) }
        try await provider.applyAsync(changes)
    }

    func removeAllAsync() async throws(DefaultsError) {
        let id = watch.begin(.removeAllAsync)
        defer { watch.end(id) }
        try await provider.removeAllAsync()
    }
}
