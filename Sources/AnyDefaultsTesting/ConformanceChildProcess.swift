import AnyDefaultsCore
import Foundation
import Synchronization

import AnyDefaultsPlatform

extension DefaultsConformanceSuite {
    /// The executable the suite runs your provider in, for the checks that need other processes:
    /// a new process reading after a restart, several processes writing at once, a process killed
    /// in the middle of a batch, and changes made by another process.
    ///
    /// The executable's whole `main.swift` is one call, with the same `open` as the suite's:
    ///
    /// ```swift
    /// import AnyDefaultsTesting
    /// import MyStore
    ///
    /// ConformanceChild.main { storage in
    ///     try MyStore(path: storage.directory.appendingPathComponent("store.db").path)
    /// }
    /// ```
    ///
    /// and the suite names it: `DefaultsConformanceSuite(child: .product(named: "MyStoreChild")) { … }`.
    /// The suite starts it with the storage and the protocol in environment variables, talks to it
    /// over its standard input and output, and kills it when it must (see Docs/Conformance.md).
    public struct ChildProcess: Sendable {
        /// The executable.
        public var executable: URL
        /// Arguments passed to it, for your own use (the protocol does not use arguments).
        public var arguments: [String]
        /// Environment variables set for it, besides the suite's own.
        public var environment: [String: String]

        public init(executable: URL, arguments: [String] = [], environment: [String: String] = [:]) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
        }

        /// An executable product of your package, built beside the test bundle (`swift build
        /// --build-tests` builds it).
        public static func product(named name: String, arguments: [String] = [], environment: [String: String] = [:]) -> ChildProcess {
            ChildProcess(executable: productsDirectory.appendingPathComponent(name), arguments: arguments, environment: environment)
        }

        /// The running executable itself, for a command-line tool that is also its own child (as
        /// ``DefaultsConformanceVerifier`` is).
        public static func currentExecutable(arguments: [String], environment: [String: String] = [:]) -> ChildProcess {
            ChildProcess(executable: currentExecutableURL, arguments: arguments, environment: environment)
        }

        /// Where the build puts executables: beside the running test bundle.
        static var productsDirectory: URL {
            #if os(macOS)
            for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
                return bundle.bundleURL.deletingLastPathComponent()
            }
            #endif
            return currentExecutableURL.deletingLastPathComponent()
        }

        static var currentExecutableURL: URL {
            #if os(Linux)
            if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                return URL(fileURLWithPath: path)
            }
            #endif
            return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        }
    }
}

/// Why a child process did not do what the suite asked.
struct ChildFailure: Error, CustomStringConvertible {
    var description: String
}

/// The suite's side of one child process: started with the storage in its environment, spoken to
/// by lines over a socket that is its standard input and output (see ``ConformanceChild``), its
/// standard error kept for messages. Every wait has a deadline, so a hung child fails a check
/// instead of hanging the suite.
final class ChildConnection: Sendable {
    /// The environment variables that tell ``ConformanceChild/main(open:)`` what to open.
    enum Variable {
        static let protocolVersion = "ANYDEFAULTS_CONFORMANCE_CHILD"
        static let directory = "ANYDEFAULTS_CONFORMANCE_DIRECTORY"
        static let identifier = "ANYDEFAULTS_CONFORMANCE_IDENTIFIER"
    }

    /// Whether this platform can start and kill processes.
    static var isSupported: Bool {
        #if os(Linux) || os(macOS) || os(FreeBSD) || os(OpenBSD) || os(Android)
        true
        #else
        false
        #endif
    }

    /// The prefix of every protocol line, so that whatever else the provider prints is ignored.
    static let marker = "@adc "

    private let process: Mutex<Process>
    let pid: Int32
    private let socket: Int32
    /// What the child wrote that is not yet read as lines, and how far it was searched for a newline.
    private let input = Mutex<(bytes: [UInt8], searched: Int)>(([], 0))
    private let standardError = OutputTail()
    private let closed = Atomic<Bool>(false)
    let timeout: Duration

    init(_ child: DefaultsConformanceSuite.ChildProcess, storage: ConformanceStorage, timeout: Duration) throws(ChildFailure) {
        #if os(Linux) || os(macOS) || os(FreeBSD) || os(OpenBSD) || os(Android)
        self.timeout = timeout
        guard FileManager.default.isExecutableFile(atPath: child.executable.path) else {
            throw ChildFailure(description: "the child executable \(child.executable.path) does not exist (build it: swift build --build-tests)")
        }
        var pair: [Int32] = [-1, -1]
        #if canImport(Glibc) || canImport(Musl)
        let streamType = Int32(SOCK_STREAM.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, streamType, 0, &pair) == 0 else {
            throw ChildFailure(description: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        // The suite's end must not leak into this or any other child: a child holding it would
        // never see the end of its input.
        _ = fcntl(pair[0], F_SETFD, FD_CLOEXEC)
        #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(pair[0], SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        socket = pair[0]
        let process = Process()
        process.executableURL = child.executable
        process.arguments = child.arguments
        var environment = ProcessInfo.processInfo.environment.merging(child.environment) { $1 }
        environment[Variable.protocolVersion] = "1"
        environment[Variable.directory] = storage.directory.path
        environment[Variable.identifier] = storage.identifier
        process.environment = environment
        let childEnd = FileHandle(fileDescriptor: pair[1], closeOnDealloc: false)
        process.standardInput = childEnd
        process.standardOutput = childEnd
        let errorPipe = Pipe()
        process.standardError = errorPipe
        do {
            try process.run()
        } catch {
            close(pair[0])
            close(pair[1])
            throw ChildFailure(description: "could not start \(child.executable.path): \(error)")
        }
        close(pair[1])
        pid = process.processIdentifier
        self.process = Mutex(process)
        // Keep the last part of standard error for messages, reading it to its end so that a
        // chatty child never blocks on a full pipe.
        standardError.drain(errorPipe.fileHandleForReading)
        #else
        throw ChildFailure(description: "child processes are not supported on this platform")
        #endif
    }

    deinit {
        terminate()
        close(socket)
    }

    /// The end of what the child wrote on standard error, for messages.
    var errorOutput: String {
        standardError.text
    }

    /// Sends one protocol line.
    func send(_ words: String...) throws(ChildFailure) {
        let bytes = Array((Self.marker + words.joined(separator: " ") + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            #if canImport(Glibc) || canImport(Musl)
            let count = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            #else
            let count = bytes.withUnsafeBytes { write(socket, $0.baseAddress! + sent, bytes.count - sent) }
            #endif
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("could not send to the child: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    /// The next protocol line the child wrote, without the marker, split into words; waits at
    /// most `timeout` (the connection's by default).
    func receive(timeout: Duration? = nil) throws(ChildFailure) -> [Substring] {
        let deadline = ContinuousClock.now + (timeout ?? self.timeout)
        while true {
            if let line = takeLine() {
                guard line.hasPrefix(Self.marker) else { continue }
                return line.dropFirst(Self.marker.count).split(separator: " ", omittingEmptySubsequences: false)
            }
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { throw failure("the child did not answer within \(timeout ?? self.timeout)") }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(max(remaining.seconds * 1000, 1), 1000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno != EINTR { throw failure("poll failed: \(String(cString: strerror(errno)))") }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw failure("could not read from the child: \(String(cString: strerror(errno)))")
            }
            if count == 0 {
                waitForExit(within: .seconds(2))
                throw failure("the child ended")
            }
            input.withLock { $0.bytes.append(contentsOf: buffer[0..<count]) }
        }
    }

    /// The first whole line received, if there is one. Each byte is searched once, so a line of
    /// megabytes arriving in many reads costs no more than its size.
    private func takeLine() -> String? {
        input.withLock { input in
            let start = input.searched
            let end: Int? = input.bytes.withUnsafeBufferPointer { buffer in
                guard start < buffer.count, let base = buffer.baseAddress,
                    let found = memchr(base + start, 0x0A, buffer.count - start)
                else { return nil }
                return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            }
            guard let end else {
                input.searched = input.bytes.count
                return nil
            }
            let line = String(decoding: input.bytes[..<end], as: UTF8.self)
            input.bytes.removeSubrange(...end)
            input.searched = 0
            return line
        }
    }

    /// Sends a request and returns the words of its answer; an `error` answer becomes a
    /// ``ChildFailure`` unless `acceptingErrors`.
    func request(_ words: String..., timeout: Duration? = nil) throws(ChildFailure) -> [Substring] {
        let line = words.joined(separator: " ")
        try send(line)
        let answer = try receive(timeout: timeout)
        if answer.first == "error" {
            throw ChildFailure(description: "the child's provider failed \(words.first ?? ""): \(ChildWire.errorText(answer))")
        }
        return answer
    }

    /// Sends a request and returns the one word its answer carries (`keys WORD`, `value WORD`).
    func payload(_ words: String...) throws(ChildFailure) -> Substring {
        let line = words.joined(separator: " ")
        try send(line)
        let answer = try receive()
        guard answer.first != "error", answer.count >= 2 else {
            throw ChildFailure(description: "the child's provider failed \(words.first ?? ""): \(ChildWire.errorText(answer))")
        }
        return answer[1]
    }

    /// Reads `key` in the child: its value, or `nil` when absent.
    func value(forKey key: String) throws(ChildFailure) -> DefaultsValue? {
        try send("get", ChildWire.text(key))
        let answer = try receive()
        switch answer.first {
        case "absent": return nil
        case "value" where answer.count >= 2: return try ChildWire.value(from: answer[1])
        default: throw ChildFailure(description: "the child's provider failed to read: \(ChildWire.errorText(answer))")
        }
    }

    /// Kills the child at once (SIGKILL) and waits for it to end.
    func kill() {
        signalChild(SIGKILL)
        waitForExit()
    }

    /// Asks the child to release its provider and exit; kills it if it does not within the timeout.
    func quit() throws(ChildFailure) {
        defer { terminate() }
        _ = try request("quit")
        waitForExit(within: timeout)
        let status = process.withLock { $0.isRunning ? nil : ($0.terminationReason == .exit ? $0.terminationStatus : -$0.terminationStatus) }
        if let status, status != 0 { throw failure("the child exited with status \(status)") }
    }

    /// Whether the child ended by a signal, and which (after it ended).
    var terminatingSignal: Int32? {
        process.withLock { $0.isRunning || $0.terminationReason != .uncaughtSignal ? nil : $0.terminationStatus }
    }

    /// Waits for the child to end, at most `limit`; `nil` waits as long as it takes.
    func waitForExit(within limit: Duration? = nil) {
        let deadline = ContinuousClock.now + (limit ?? .seconds(3600))
        while process.withLock({ $0.isRunning }) {
            if ContinuousClock.now > deadline {
                signalChild(SIGKILL)
            }
            usleep(2_000)
        }
    }

    /// Ends the child if it still runs.
    func terminate() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        if process.withLock({ $0.isRunning }) {
            signalChild(SIGKILL)
            waitForExit()
        }
        awaitErrorOutput()
    }

    /// Sends `signal` to the child.
    func signalChild(_ signal: Int32) {
        #if canImport(Glibc)
        _ = Glibc.kill(pid, signal)
        #elseif canImport(Musl)
        _ = Musl.kill(pid, signal)
        #elseif canImport(Darwin)
        _ = Darwin.kill(pid, signal)
        #endif
    }

    /// Waits (at most 2 s) until everything the ended child wrote on standard error was read.
    private func awaitErrorOutput() {
        let deadline = ContinuousClock.now + .seconds(2)
        while !standardError.isDrained, ContinuousClock.now < deadline { usleep(1_000) }
    }

    /// A failure with the child's standard error and how it ended.
    func failure(_ message: String) -> ChildFailure {
        var text = message
        if !process.withLock({ $0.isRunning }) {
            awaitErrorOutput()
            let (reason, status) = process.withLock { ($0.terminationReason, $0.terminationStatus) }
            text += reason == .uncaughtSignal ? " (it was ended by signal \(status))" : " (it exited with status \(status))"
        }
        let errors = errorOutput
        if !errors.isEmpty { text += "; its standard error: \(errors.suffix(600))" }
        return ChildFailure(description: text)
    }
}

/// The last part of what a child wrote on standard error, read to its end on a thread of its own
/// so that a chatty child never blocks on a full pipe.
final class OutputTail: Sendable {
    private let data = Mutex<Data>(Data())
    private let drained = Atomic<Bool>(false)

    func drain(_ reader: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                data.withLock { data in
                    data.append(chunk)
                    if data.count > 16_384 { data = data.suffix(8_192) }
                }
            }
            drained.store(true, ordering: .releasing)
        }
    }

    var isDrained: Bool { drained.load(ordering: .acquiring) }

    var text: String {
        String(decoding: data.withLock { $0 }, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
