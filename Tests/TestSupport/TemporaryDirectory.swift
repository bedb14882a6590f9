import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()`` or at the end
/// of ``withTemporaryDirectory(_:)``.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    /// Creates the directory under the system's temporary directory, or under `parent` (for
    /// example a tmpfs such as `/dev/shm`) when that is a writable directory.
    public init(prefix: String = "anydefaults-test", under parent: String? = nil) throws {
        let base = parent.flatMap { FileManager.default.isWritableFile(atPath: $0) ? URL(fileURLWithPath: $0) : nil }
        url = (base ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public var path: String { url.path }

    /// The path of `name` inside this directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    public func remove() {
        // Make read-only leftovers of permission tests removable.
        if let enumerator = FileManager.default.enumerator(atPath: path) {
            for case let item as String in enumerator {
                chmod(url.appendingPathComponent(item).path, 0o700)
            }
        }
        chmod(path, 0o700)
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a fresh temporary directory and removes the directory afterwards, also when
/// `body` throws.
public func withTemporaryDirectory<T>(
    _ body: (TemporaryDirectory) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}

/// The synchronous form of ``withTemporaryDirectory(_:)``.
public func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory)
}
