import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output and standard error, written unbuffered so that every line is out as soon as
/// it is written (`watch` relies on it) and the two streams never reorder.
enum Console {
    /// Writes `text` to standard output.
    static func write(_ text: String) {
        write(Data(text.utf8))
    }

    /// Writes `data` to standard output.
    static func write(_ data: Data) {
        // A closed pipe ends the process with SIGPIPE, as for any Unix tool; if SIGPIPE is
        // ignored, the failed write is dropped rather than crashing.
        try? FileHandle.standardOutput.write(contentsOf: data)
    }

    /// Writes `anydefaults: MESSAGE` and a newline to standard error.
    static func error(_ message: String) {
        note("anydefaults: " + message)
    }

    /// Writes `text` and a newline to standard error.
    static func note(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
    }

    /// Whether standard error is a terminal: progress is shown only then.
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Whether standard output is a terminal.
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
}
