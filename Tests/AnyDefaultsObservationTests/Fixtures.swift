import AnyDefaults
import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

/// The backends every test runs on: each of the catalog (TestBackend.all) behind the cache, and
/// the in-memory one without it. `open` may be called several times on one fixture: each call
/// gives another `Defaults` on the same storage (the same provider instance for the in-memory
/// backend, another provider instance on the same file or suite for a persistent one).
///
/// ```swift
/// let fixture = try backend.fixture()
/// defer { fixture.remove() }
/// let defaults = try fixture.open()
/// ```
struct Backend: CustomStringConvertible, Sendable {
    let backend: TestBackend
    let cached: Bool

    static let allCases = TestBackend.all.map { Backend(backend: $0, cached: true) } + [Backend(backend: .memory, cached: false)]

    var description: String { backend.name + (cached ? "" : " uncached") }

    /// Whether values outlive the provider instance.
    var isPersistent: Bool { backend.isPersistent }

    func fixture() throws -> StoreFixture {
        let directory = try TemporaryDirectory()
        let store = backend.store(in: directory.path, name: "settings", suite: TestBackend.uniqueSuite("observation")) + "?cache=off"
        let cached = cached
        let open: @Sendable () throws -> any DefaultsProvider
        if isPersistent {
            open = { try ProviderRegistry.standard.makeProvider(store) }
        } else {
            let provider = try ProviderRegistry.standard.makeProvider(store)
            open = { provider }
        }
        return StoreFixture(directory: directory, store: store) { errors in
            Defaults(try open(), cached: cached, errorHandler: errors.handler)
        }
    }
}

/// Opens `Defaults` on one storage; ``remove()`` removes the storage.
final class StoreFixture: Sendable {
    let errors = ErrorLog()
    private let opener: @Sendable (ErrorLog) throws -> Defaults
    private let directory: TemporaryDirectory?
    private let store: String?

    init(directory: TemporaryDirectory? = nil, store: String? = nil, _ open: @escaping @Sendable (ErrorLog) throws -> Defaults) {
        opener = open
        self.directory = directory
        self.store = store
    }

    /// Another `Defaults` on this fixture's storage.
    func open() throws -> Defaults {
        try opener(errors)
    }

    /// Removes the storage (a persistent backend's directory, or suite).
    func remove() {
        if let store { TestBackend.removeSuite(of: store) }
        directory?.remove()
    }
}

/// Collects what a `Defaults` reports.
final class ErrorLog: Sendable {
    private let errors = Mutex<[DefaultsError]>([])
    var all: [DefaultsError] { errors.withLock { $0 } }
    var handler: Defaults.ErrorHandler { { error in self.errors.withLock { $0.append(error) } } }
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Runs `read` inside `withObservationTracking` and returns a counter of the `onChange` calls.
func track(_ read: () -> Void) -> Counter {
    let counter = Counter()
    withObservationTracking(read, onChange: { counter.increment() })
    return counter
}

/// The first `count` elements of `sequence`, failing after `seconds` rather than hanging.
func first<S: AsyncSequence & Sendable>(
    _ count: Int, of sequence: S, within seconds: Double = 30
) async throws -> [S.Element] where S.Element: Sendable {
    try await withThrowingTaskGroup(of: [S.Element]?.self) { group in
        group.addTask {
            var result: [S.Element] = []
            for try await element in sequence {
                result.append(element)
                if result.count == count { break }
            }
            return result
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let result = try await group.next() ?? nil
        group.cancelAll()
        return try #require(result, "timed out waiting for \(count) elements")
    }
}

struct Layout: Codable, Hashable, DefaultsCodable {
    var columns: Int
    var sidebar: Bool
}

enum Theme: String, DefaultsSerializable {
    case light, dark
}

extension DefaultsKeys {
    static let volume = DefaultsKey<Double>("volume", default: 0.5)
    static let muted = DefaultsKey<Bool>("muted", default: false)
    static let theme = DefaultsKey<Theme>("theme", default: .light)
    static let layout = DefaultsKey<Layout>("layout", default: Layout(columns: 2, sidebar: true))
    static let nickname = DefaultsKey<String?>("nickname")
    static let launchCount = DefaultsKey<Int>("launchCount", default: 0)
}

/// An in-memory provider that counts the batches it is asked to apply and its live observations.
final class CountingProvider: DefaultsProvider {
    private let base = AnyDefaultsMemory.MemoryProvider()
    private let applied = Mutex(0)
    private let observing = Mutex(0)

    var batches: Int { applied.withLock { $0 } }
    var observations: Int { observing.withLock { $0 } }
    var capabilities: DefaultsCapabilities { base.capabilities }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try base.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try base.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        applied.withLock { $0 += 1 }
        try base.apply(changes)
    }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        let inner = base.observe(handler)
        observing.withLock { $0 += 1 }
        return DefaultsObservation { [self] in
            inner.cancel()
            observing.withLock { $0 -= 1 }
        }
    }
}

/// Waits until the changes made so far have reached every observer of `defaults`.
///
/// Observers may be called on another thread than the writer's (the JSON file backend's watcher
/// thread may deliver a write's events), but always in commit order, each event to every observer
/// before the next: so once a marker written now has been seen, every earlier change has been
/// handled. The marker is removed again, and its events are waited for too.
func settle(_ defaults: Defaults, sourceLocation: SourceLocation = #_sourceLocation) {
    let marker = "settle.marker"
    let seen = Counter()
    let observation = defaults.observe(keys: [marker]) { _ in seen.increment() }
    defaults.set(true, forKey: marker)
    defaults.removeObject(forKey: marker)
    #expect(waitUntil { seen.count == 2 }, sourceLocation: sourceLocation)
    observation.cancel()
}

