import Foundation

/// Runs an executable of this package (built next to the test bundle) as a real child process, for
/// multi-process and crash tests.
///
/// ```swift
/// let result = try ChildProcess.run("TestChild", ["write", "sqlite:" + path, "k", "1"])
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
        try start(executable: executable(name), arguments, environment: environment)
    }

    /// Starts the program at `executable` (a tool such as `swiftc`) with `arguments`.
    public static func start(
        executable: URL, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (process: Process, output: Pipe, error: Pipe) {
        let output = Pipe()
        let error = Pipe()
        let process = try launch(executable, arguments, environment: environment, input: FileHandle.nullDevice, output: output, error: error)
        return (process, output, error)
    }

    private static func launch(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Any, output: Any, error: Any
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return process
    }

    /// Starts `name` with `arguments` for a conversation: returns the running process, the
    /// handle that writes to its standard input and a reader of its standard output's lines. Its
    /// standard error is discarded.
    public static func startConversation(
        _ name: String, _ arguments: [String]
    ) throws -> (process: Process, input: FileHandle, output: LineReader) {
        let input = Pipe()
        let output = Pipe()
        let process = try launch(executable(name), arguments, input: input, output: output, error: FileHandle.nullDevice)
        return (process, input.fileHandleForWriting, LineReader(output.fileHandleForReading))
    }

    /// Reads a child's output line by line.
    public final class LineReader {
        private let handle: FileHandle
        private var buffer = Data()

        init(_ handle: FileHandle) { self.handle = handle }

        /// The next line, without its newline; `nil` at the end of the output.
        public func readLine() throws -> String? {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    return line
                }
                let chunk = handle.availableData
                guard !chunk.isEmpty else { return nil }
                buffer.append(chunk)
            }
        }
    }

    /// Runs the system program at `path` (`/bin/mount`) to its end and returns its status and
    /// output.
    public static func runSystem(_ path: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self), wasSignaled: process.terminationReason == .uncaughtSignal)
    }

    /// Runs `name` to its end and returns its status and output.
    public static func run(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> Result {
        try run(executable: executable(name), arguments, environment: environment)
    }

    /// Runs the program at `executable` (a tool such as `swiftc`) to its end.
    public static func run(
        executable: URL, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> Result {
        let (process, output, error) = try start(executable: executable, arguments, environment: environment)
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
