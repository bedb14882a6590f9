import Foundation

/// Runs an executable of this package (built next to the test bundle) as a real child process, for
/// multi-process and crash tests.
///
/// ```swift
/// let result = try ChildProcess.run("SQLiteTestChild", ["write", path, "k", "1"])
/// #expect(result.status == 0, "\(result.standardError)")
/// ```
public enum ChildProcess {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
        /// Whether the process ended by a signal rather than by exiting.
        public var wasSignaled: Bool

        public init(status: Int32, standardOutput: String, standardError: String, wasSignaled: Bool) {
            self.status = status
            self.standardOutput = standardOutput
            self.standardError = standardError
            self.wasSignaled = wasSignaled
        }
    }

    public struct NotBuilt: Error, CustomStringConvertible {
        public var name: String
        public var looked: String
        public var description: String {
            "The executable '\(name)' was not found in \(looked); build the tests with `swift build --build-tests`."
        }
    }

    /// The build products directory: where the test bundle and the package's executables are.
    public static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The URL of the executable `name`.
    public static func executable(_ name: String) throws -> URL {
        let url = productsDirectory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw NotBuilt(name: name, looked: productsDirectory.path)
        }
        return url
    }

    /// Starts `name` with `arguments` and returns the running process; its output goes to the
    /// returned pipes.
    public static func start(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (process: Process, output: Pipe, error: Pipe) {
        let process = Process()
        process.executableURL = try executable(name)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, output, error)
    }

    /// Runs `name` to its end and returns its status and output.
    public static func run(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> Result {
        let (process, output, error) = try start(name, arguments, environment: environment)
        // Read both pipes before waiting, so that a chatty child cannot block on a full pipe.
        let errorData = Mutex<Data>(Data())
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        reading.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self),
            wasSignaled: process.terminationReason == .uncaughtSignal)
    }

    /// The process identifier of a process that has ended (`/bin/true`, run and waited for): a
    /// number that names no running process, for tests of what a dead process left behind.
    public static func endedProcessIdentifier() throws -> Int32 {
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        return ended.processIdentifier
    }
}

import Synchronization
