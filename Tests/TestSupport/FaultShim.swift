import Foundation

/// The fault-injection library (`Tests/FaultInjection/faultshim.c`), built by the tests with the
/// system's C compiler and preloaded (`LD_PRELOAD`) into a child process: it counts the
/// file-system calls the child makes on files under one directory and fails a chosen one with a
/// chosen error. Linux (glibc) only: guard tests with ``isSupported``.
///
/// ```swift
/// let shim = try FaultShim.build(in: directory.path)
/// let counted = try ChildProcess.run("anydefaults", arguments, environment: shim.environment(watching: directory.path, log: log))
/// let calls = try FaultShim.calls(inLog: log)
/// ```
public struct FaultShim: Sendable {
    /// The built library.
    public let library: String

    /// Whether the shim can run here: `LD_PRELOAD` interposition of glibc's functions.
    public static var isSupported: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// The shim's C source, in the package's `Tests/FaultInjection` (found from this file's path,
    /// so it works from any checkout).
    public static var source: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FaultInjection/faultshim.c").path
    }

    public struct BuildFailed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Compiles the shim into `directory` with the first of `cc`, `gcc`, `clang` on `PATH`
    /// (`scripts/bootstrap` installs `gcc`). Throws when none is there or it fails: a test that
    /// needs the shim then fails loudly.
    public static func build(in directory: String) throws -> FaultShim {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let compilers = ["cc", "gcc", "clang"].flatMap { name in
            path.split(separator: ":").map { "\($0)/\(name)" }
        }
        guard let compiler = compilers.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BuildFailed(description: "no C compiler (cc, gcc or clang) on PATH to build \(source); run scripts/bootstrap")
        }
        let library = directory + "/faultshim.so"
        let result = try ChildProcess.run(
            executable: URL(fileURLWithPath: compiler), ["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"])
        guard result.status == 0, FileManager.default.fileExists(atPath: library) else {
            throw BuildFailed(description: "\(compiler) could not build \(source) (status \(result.status)): \(result.standardError)")
        }
        return FaultShim(library: library)
    }

    /// The error a failed call reports.
    public enum Failure: String, Sendable, CaseIterable, CustomStringConvertible {
        case eio = "EIO"
        case enospc = "ENOSPC"
        public var description: String { rawValue }
    }

    /// The environment that preloads the shim into a child: count the calls on files under
    /// `directory`, log them to `log`, and fail call number `failing` (from 1) with `failure`,
    /// only that one or (`persistent`) every counted call from it on.
    public func environment(
        watching directory: String, log: String, failing: Int? = nil, with failure: Failure = .eio, persistent: Bool = false
    ) -> [String: String] {
        [
            "LD_PRELOAD": library, "FAULTSHIM_DIR": directory, "FAULTSHIM_LOG": log,
            "FAULTSHIM_FAIL": String(failing ?? 0), "FAULTSHIM_PERSIST": persistent ? "1" : "0",
            "FAULTSHIM_ERRNO": failure.rawValue,
        ]
    }

    /// One counted call, as the shim logged it.
    public struct Call: Sendable, Equatable, CustomStringConvertible {
        public var process: Int32
        /// Its number among the counted calls of its process, from 1.
        public var number: Int
        /// open, mkdir, write, dwrite (a write through a descriptor opened with `O_SYNC` or
        /// `O_DSYNC`), sync, rename, unlink, truncate, lock.
        public var kind: String
        public var function: String
        public var failed: Bool
        /// The path (the new name for a rename), or `fd:N`.
        public var target: String

        /// Whether the call makes data durable: an `fsync`, an `fdatasync`, or a write through a
        /// synchronous descriptor.
        public var isSync: Bool { kind == "sync" || kind == "dwrite" }

        public var description: String { "#\(number) \(function) \(target)\(failed ? " (failed)" : "")" }
    }

    /// The calls logged in `log`, in order (none if the file is missing).
    public static func calls(inLog log: String) -> [Call] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: false)
            guard fields.count == 6, let process = Int32(fields[0]), let number = Int(fields[1]) else { return nil }
            return Call(
                process: process, number: number, kind: String(fields[2]), function: String(fields[3]),
                failed: fields[4] == "FAIL", target: String(fields[5]))
        }
    }
}
