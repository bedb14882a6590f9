import AnyDefaults
import AnyDefaultsPlatform
import Foundation

/// A command line the child cannot run: printed on standard error, exit status 64.
struct Usage: Error, CustomStringConvertible {
    var description: String
}

/// Something a command checked went wrong (not a `DefaultsError` of the store): printed on
/// standard error with `status`.
struct Failure: Error, CustomStringConvertible {
    var description: String
    var status: Int32 = 2
}

/// Writes a line to standard output at once (one `write(2)`, unbuffered, so that lines of several
/// threads do not mix): what the parent reads after a kill must be everything printed before it.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(1, $0.baseAddress! + written, bytes.count - written) }
        if count < 0, errno == EINTR { continue }
        if count <= 0 { exit(4) }
        written += count
    }
}

/// The line that reports a store's error to the parent: `error <code>`, and the path it names if
/// any (`error permissionDenied /tmp/x/store.sqlite`).
func errorLine(_ error: DefaultsError) -> String {
    "error \(error.code)" + (error.path.map { " " + $0 } ?? "")
}

/// Writes `message` on standard error.
func complain(_ message: String) {
    FileHandle.standardError.write(Data("TestChild: \(message)\n".utf8))
}

/// The arguments after the command's name, read by position.
struct Arguments {
    let command: String
    let values: [String]

    var count: Int { values.count }

    /// The argument at `index`, called `name` in the usage message.
    func text(_ index: Int, _ name: String) throws(Usage) -> String {
        guard index < values.count else { throw Usage(description: "\(command): missing <\(name)> (argument \(index + 1))") }
        return values[index]
    }

    func int(_ index: Int, _ name: String) throws(Usage) -> Int {
        let text = try text(index, name)
        guard let number = Int(text) else { throw Usage(description: "\(command): <\(name)> must be an integer, not \(text)") }
        return number
    }

    func number(_ index: Int, _ name: String) throws(Usage) -> Double {
        let text = try text(index, name)
        guard let number = Double(text) else { throw Usage(description: "\(command): <\(name)> must be a number, not \(text)") }
        return number
    }

    /// The arguments from `index` on.
    func rest(from index: Int) -> ArraySlice<String> { values.dropFirst(index) }

    /// Fails unless there are `range` arguments.
    func expect(_ range: ClosedRange<Int>) throws(Usage) {
        guard range.contains(values.count) else {
            throw Usage(description: "\(command): \(range.lowerBound)…\(range.upperBound) arguments expected, not \(values.count): \(values)")
        }
    }
}

/// Gives up root (to user and group 65534) when running as root, so that file permissions bind.
func becomeUnprivileged() throws(Failure) {
    guard geteuid() == 0 else { return }
    guard setgid(65534) == 0, setuid(65534) == 0 else { throw Failure(description: "could not give up root") }
}
