import AnyDefaultsMacros
import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

/// A built-in backend, as the tests open it: a store string for a fresh store, and whether it
/// reports changes made by other processes.
struct TestBackend: Sendable, CustomTestStringConvertible {
    let name: String
    /// The store string, with `{dir}` for a fresh directory and `{suite}` for a fresh suite name.
    let template: String
    let reportsOtherProcesses: Bool

    var testDescription: String { name }

    static let all = [
        TestBackend(name: "memory", template: "memory:", reportsOtherProcesses: false),
        TestBackend(name: "JSON file", template: "json:{dir}/settings.json", reportsOtherProcesses: true),
        TestBackend(name: "UserDefaults", template: "userdefaults:{suite}", reportsOtherProcesses: !isDarwin),
        TestBackend(name: "SQLite", template: "sqlite:{dir}/settings.sqlite", reportsOtherProcesses: true),
        TestBackend(name: "LMDB", template: "lmdb:{dir}/env", reportsOtherProcesses: true),
    ]

    static var otherProcesses: [TestBackend] { all.filter(\.reportsOtherProcesses) }

    private static var isDarwin: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// Runs `body` with a fresh store of this backend, removed afterwards.
    func withStore<T>(_ body: (TestStore) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            let suite = "anydefaults-macros-\(UUID().uuidString)"
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            let configuration = template.replacingOccurrences(of: "{dir}", with: directory.path)
                .replacingOccurrences(of: "{suite}", with: suite)
            return try body(TestStore(configuration: configuration))
        }
    }

    func withStore<T>(_ body: (TestStore) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { directory in
            let suite = "anydefaults-macros-\(UUID().uuidString)"
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            let configuration = template.replacingOccurrences(of: "{dir}", with: directory.path)
                .replacingOccurrences(of: "{suite}", with: suite)
            return try await body(TestStore(configuration: configuration))
        }
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

    /// Has another process (ExternalChangesTestChild) make each of `writes` one write: `key=7`
    /// sets an integer, `-key` removes, `a=1,b=2` is one batch.
    func writeFromAnotherProcess(_ writes: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try ChildProcess.run("ExternalChangesTestChild", [configuration] + writes)
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

/// Waits until `condition` holds, recording an issue after `seconds`.
func eventually(within seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("the condition did not hold within \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
