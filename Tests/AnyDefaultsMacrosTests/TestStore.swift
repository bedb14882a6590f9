import AnyDefaultsMacros
import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

/// The built-in backends of the catalog (TestBackend, in TestSupport), as these tests open them.
extension TestBackend {
    /// The backends that report changes made by other processes on this platform.
    static var otherProcesses: [TestBackend] { reportingOtherProcesses }

    /// Runs `body` with a fresh store of this backend, removed afterwards.
    func withStore<T>(_ body: (TestStore) throws -> T) throws -> T {
        try withStore(name: "settings") { store, _ in try body(TestStore(configuration: store)) }
    }

    func withStore<T>(_ body: (TestStore) async throws -> T) async throws -> T {
        try await withStore(name: "settings") { store, _ in try await body(TestStore(configuration: store)) }
    }
}

/// One store: its configuration string, the `Defaults` opened on it, and what it reported.
final class TestStore: Sendable {
    let configuration: String
    let errors = Recorder<DefaultsError>()
    let defaults: Defaults

    init(configuration: String) throws {
        self.configuration = configuration
        let errors = errors
        defaults = try Defaults(url: configuration, errorHandler: { errors.record($0) })
    }

    /// Has another process (TestChild) make each of `writes` one write: `key=7`
    /// sets an integer, `-key` removes, `a=1,b=2` is one batch.
    func writeFromAnotherProcess(_ writes: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try ChildProcess.run("TestChild", ["apply", configuration] + writes)
        #expect(result.status == 0, "\(result.standardError)", sourceLocation: sourceLocation)
    }
}

/// Counts the `onChange` calls of one `withObservationTracking` around `read`.
func track(_ read: () -> Void) -> Recorder<Int> {
    let changes = Recorder<Int>()
    withObservationTracking(read) { changes.record(1) }
    return changes
}

/// Waits until the changes made so far through `defaults` have reached its observers: events may
/// come a moment after the write, on another thread (the JSON file's watcher), but in order.
func settle(_ defaults: Defaults) {
    let seen = Recorder<Int>()
    let observation = defaults.observe(keys: ["settle.marker"]) { _ in seen.record(1) }
    defaults.set(true, forKey: "settle.marker")
    defaults.removeObject(forKey: "settle.marker")
    _ = seen.wait(for: 2)
    observation.cancel()
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
