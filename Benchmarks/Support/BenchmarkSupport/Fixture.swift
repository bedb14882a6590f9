import Foundation
import Synchronization

/// Something a benchmark works on (stores, files, connections), made in a temporary directory of
/// its own when the benchmark's setup runs and removed in its teardown.
///
/// package-benchmark registers every benchmark in every process it starts (to list them, then
/// once per benchmark run), so nothing costly may happen at registration: a fixture is made only
/// in the process that runs a benchmark using it, and none is left in the temporary directory.
///
/// ```swift
/// let store = Fixture("sqlite-read") { directory in try SQLiteProvider(path: directory.path + "/s.db") }
/// Benchmark("Read", closure: { benchmark in let provider = try store.value() ... },
///           setup: { try store.setUp() }, teardown: { store.tearDown() })
/// ```
public final class Fixture<Value: Sendable>: Sendable {
    private let name: String
    private let make: @Sendable (URL) throws -> Value
    private let current = Mutex<(value: Value, directory: URL)?>(nil)

    /// Thrown by ``value()`` outside setup and teardown.
    public struct NotSetUp: Error {
        public var name: String
    }

    /// A fixture named `name` (for its directory), built by `make` in an empty directory.
    public init(_ name: String, make: @escaping @Sendable (URL) throws -> Value) {
        self.name = name
        self.make = make
    }

    /// Makes the value in a fresh temporary directory; replaces one made before.
    public func setUp() throws {
        tearDown()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anydefaults-benchmark-\(name)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            let value = try make(directory)
            current.withLock { $0 = (value, directory) }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The value made by ``setUp()``.
    public func value() throws -> Value {
        guard let value = current.withLock({ $0?.value }) else { throw NotSetUp(name: name) }
        return value
    }

    /// Releases the value (so it closes what it holds) and removes its directory.
    public func tearDown() {
        let directory = current.withLock { current -> URL? in
            defer { current = nil }
            return current?.directory
        }
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}
