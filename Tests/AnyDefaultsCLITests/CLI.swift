import AnyDefaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// Runs the built `anydefaults` executable in a sandbox: a temporary directory that is also its
/// `TMPDIR`, `XDG_CONFIG_HOME` (UserDefaults suites) and `XDG_DATA_HOME` (the default store), with
/// `ANYDEFAULTS_STORE` and `ANYDEFAULTS_CONFIG` cleared.
struct CLI {
    let directory: TemporaryDirectory

    init(_ directory: TemporaryDirectory) throws {
        self.directory = directory
        for folder in ["tmp", "config", "data"] {
            try FileManager.default.createDirectory(atPath: directory.path(folder), withIntermediateDirectories: true)
        }
    }

    /// The environment every run gets, merged over the test process's.
    var environment: [String: String] {
        [
            "TMPDIR": directory.path("tmp"), "XDG_CONFIG_HOME": directory.path("config"),
            "XDG_DATA_HOME": directory.path("data"), "ANYDEFAULTS_STORE": "", "ANYDEFAULTS_CONFIG": "",
        ]
    }

    /// The path of `name` in the sandbox.
    func path(_ name: String) -> String { directory.path(name) }

    /// A `json:` store string for a file in the sandbox.
    func json(_ name: String = "store.json") -> String { "json:" + path(name) }

    /// A `userdefaults:` store string for a suite whose file is in the sandbox's config directory.
    func suite(_ name: String = "com.example.cli-tests") -> String { "userdefaults:" + name }

    /// Runs `anydefaults ARGUMENTS` to its end.
    @discardableResult
    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ChildProcess.Result {
        try ChildProcess.run("anydefaults", arguments, environment: environment.merging(extra) { $1 })
    }

    /// Runs `anydefaults ARGUMENTS` and expects status 0.
    @discardableResult
    func succeed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildProcess.Result {
        let result = try run(arguments)
        #expect(result.status == 0 && !result.wasSignaled, "\(arguments): \(result.standardError)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs `anydefaults ARGUMENTS`, killing it (and recording an issue) if it has not ended
    /// within `timeout`: for the cases that used to block forever.
    @discardableResult
    func runBounded(
        _ arguments: [String], environment extra: [String: String] = [:], timeout: Duration = .seconds(30),
        standardOutput: FileHandle? = nil, standardInput: FileHandle? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ChildProcess.Result {
        try Self.runBounded(
            ChildProcess.executable("anydefaults"), arguments, environment: environment.merging(extra) { $1 }, timeout: timeout,
            standardOutput: standardOutput, standardInput: standardInput, sourceLocation: sourceLocation)
    }

    /// Runs `script` with `/bin/sh -c`, with `$ANYDEFAULTS` the executable's path: for arguments
    /// and environments that a Swift `String` cannot hold (bytes that are not UTF-8).
    @discardableResult
    func runShell(_ script: String, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildProcess.Result {
        var environment = environment
        environment["ANYDEFAULTS"] = try ChildProcess.executable("anydefaults").path
        return try Self.runBounded(
            URL(fileURLWithPath: "/bin/sh"), ["-c", script], environment: environment, timeout: timeout, standardOutput: nil,
            standardInput: nil, sourceLocation: sourceLocation)
    }

    private static func runBounded(
        _ executable: URL, _ arguments: [String], environment: [String: String], timeout: Duration,
        standardOutput: FileHandle?, standardInput: FileHandle?, sourceLocation: SourceLocation
    ) throws -> ChildProcess.Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = standardOutput ?? output
        process.standardError = error
        process.standardInput = standardInput ?? FileHandle.nullDevice
        try process.run()
        if standardOutput != nil { try output.fileHandleForWriting.close() }
        let collected = Mutex((output: Data(), error: Data()))
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0.error = data }
        }
        DispatchQueue.global().async(group: reading) {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0.output = data }
        }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { usleep(5_000) }
        if process.isRunning {
            Issue.record("anydefaults \(arguments) did not end within \(timeout): killed", sourceLocation: sourceLocation)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        reading.wait()
        let (outputData, errorData) = collected.withLock { ($0.output, $0.error) }
        return ChildProcess.Result(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self), wasSignaled: process.terminationReason == .uncaughtSignal)
    }

    /// Starts `anydefaults ARGUMENTS`; its standard output is collected as it arrives.
    func start(_ arguments: [String]) throws -> RunningCLI {
        let (process, output, error) = try ChildProcess.start("anydefaults", arguments, environment: environment)
        return RunningCLI(process: process, output: output, error: error)
    }

    /// What the store holds, read by `anydefaults export` (so it works for any backend).
    func contents(of store: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: DefaultsValue] {
        let result = try run(["--store", store, "export"])
        #expect(result.status == 0, "export: \(result.standardError)", sourceLocation: sourceLocation)
        return try ExactJSON.store(from: Data(result.standardOutput.utf8))
    }

    /// Whether `store` holds no key: empty, or gone (66: a UserDefaults suite's file is removed
    /// with its last key, and reading never creates a store).
    func holdsNothing(_ store: String) throws -> Bool {
        let result = try run(["--store", store, "keys"])
        return result.status == 66 || (result.status == 0 && result.standardOutput.isEmpty)
    }

    /// Fills `store` with exactly `values`, through `anydefaults import --replace`.
    func fill(_ store: String, with values: [String: DefaultsValue], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = path("fill-\(UUID().uuidString).json")
        try ExactJSON.data(from: values).write(to: URL(fileURLWithPath: file))
        let result = try run(["--store", store, "import", "--replace", file])
        #expect(result.status == 0, "import: \(result.standardError)", sourceLocation: sourceLocation)
        try FileManager.default.removeItem(atPath: file)
    }
}

/// A running `anydefaults`, its standard output collected line by line and its standard error
/// as it arrives.
final class RunningCLI {
    let process: Process
    private let error: Pipe
    private let errorOutput: Collected
    private let collected = Collected()
    private let reader: Thread

    init(process: Process, output: Pipe, error: Pipe) {
        self.process = process
        self.error = error
        errorOutput = Collected(reading: error.fileHandleForReading)
        let collected = collected
        let handle = output.fileHandleForReading
        reader = Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                collected.data.withLock { $0.append(data) }
            }
        }
        reader.start()
    }

    /// The complete lines written so far.
    var lines: [String] {
        let text = String(decoding: collected.data.withLock { $0 }, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Waits until `condition` holds for the lines (or the timeout passes); returns whether it held.
    func wait(timeout: Duration = .seconds(10), until condition: ([String]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(lines) { return true }
            usleep(10_000)
        }
        return condition(lines)
    }

    /// The standard error written so far.
    var standardError: String {
        String(decoding: errorOutput.data.withLock { $0 }, as: UTF8.self)
    }

    /// Waits until `condition` holds for the standard error written so far (or the timeout
    /// passes); returns whether it held.
    func waitForError(timeout: Duration = .patience, until condition: (String) -> Bool) -> Bool {
        waitUntil(within: timeout) { condition(standardError) }
    }

    /// Waits for the process to end (killing it after `timeout`) and returns its standard error.
    func finish(timeout: Duration = .seconds(10)) -> String {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        // Let the readers take the last output: they end at the end of their pipes.
        _ = waitUntil(within: .seconds(10)) { reader.isFinished && errorOutput.finished.withLock { $0 } }
        return standardError
    }
}

/// The output a ``RunningCLI`` (or another reader) has read so far, shared with its reading thread.
final class Collected: Sendable {
    let data = Mutex(Data())

    init() {}

    /// Starts a thread that collects everything `handle` yields until its end.
    init(reading handle: FileHandle) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                self.data.withLock { $0.append(chunk) }
            }
            self.finished.withLock { $0 = true }
        }.start()
    }

    /// Whether the reading thread reached the end.
    let finished = Mutex(false)

    var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
}
