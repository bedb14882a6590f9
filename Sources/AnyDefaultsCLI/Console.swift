import AnyDefaults
import Foundation

import AnyDefaultsPlatform

/// Standard output and standard error, written unbuffered so that every line is out as soon as
/// it is written (`watch` relies on it) and the two streams never reorder.
///
/// Every write to standard output is checked: a full disk (`> /dev/full`), a closed pipe (SIGPIPE
/// is ignored, so the write fails with `EPIPE` instead of killing the process) or any other
/// failure throws, and the command exits with status 74, as does a failure to close standard
/// output at the end (``finish()``). Lines for people (messages, notes, progress) never print a
/// control character raw (``DefaultsError/printable(_:)``), so that a crafted key or path cannot
/// make one line read as two.
enum Console {
    /// Writes `text` to standard output.
    static func write(_ text: String) throws(CommandFailure) {
        try write(Data(text.utf8))
    }

    /// Writes `data` to standard output.
    static func write(_ data: Data) throws(CommandFailure) {
        let failure: Int32? = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = systemWrite(STDOUT_FILENO, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += count
            }
            return nil
        }
        if let failure { throw outputFailure(failure) }
    }

    /// Writes `text`, a report for people (a table, a summary), to standard output, each of its
    /// lines made printable (``DefaultsError/printable(_:)``): a store string or key with a
    /// control character in it cannot break or forge a line.
    static func writeLines(_ text: String) throws(CommandFailure) {
        try write(text.split(separator: "\n", omittingEmptySubsequences: false).map { DefaultsError.printable(String($0)) }.joined(separator: "\n"))
    }

    /// Closes standard output and reports a failure to do so (a delayed write error of a file
    /// system), so that a command whose output was lost does not exit 0.
    static func finish() throws(CommandFailure) {
        // A file system may report a write error only at close (NFS does).
        if close(STDOUT_FILENO) != 0, errno != EBADF, errno != EINTR {
            throw outputFailure(errno)
        }
    }

    private static func outputFailure(_ code: Int32) -> CommandFailure {
        CommandFailure(ExitStatus.ioError, "cannot write to standard output: \(String(cString: strerror(code)))")
    }

    /// Writes `anydefaults: MESSAGE` and a newline to standard error.
    static func error(_ message: String) {
        note("anydefaults: " + message)
    }

    /// Writes `text` (made printable) and a newline to standard error. A failure is ignored:
    /// there is nowhere left to report it.
    static func note(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data((DefaultsError.printable(text) + "\n").utf8))
    }

    /// Whether standard error is a terminal: progress is shown only then.
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Whether standard output is a terminal.
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

    /// A name (a key, a path) for one line of output that lists names: each on its own line,
    /// unambiguously. A backslash becomes `\\` and every character that would not print as itself
    /// on one line (``DefaultsError/printable(_:)``) a `\u{XX}` escape; any other name prints as
    /// it is.
    static func listed(_ name: String) -> String {
        let printable = DefaultsError.printable(name)
        guard printable != name || name.contains("\\") else { return name }
        return DefaultsError.printable(name.replacingOccurrences(of: "\\", with: "\\\\"))
    }
}

/// The system's `write(2)` (inside ``Console`` the name is its own method).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
