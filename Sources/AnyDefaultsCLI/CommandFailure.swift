import AnyDefaults
import ArgumentParser
import Foundation

/// Exit statuses (from sysexits.h where one fits), documented in `anydefaults --help`.
enum ExitStatus {
    static let keyNotFound: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let software: Int32 = 70
    static let ioError: Int32 = 74
    static let temporaryFailure: Int32 = 75
    static let permissionDenied: Int32 = 77

    /// The status for a store error.
    static func forError(_ error: DefaultsError) -> Int32 {
        switch error.code {
        case .invalidConfiguration, .invalidKey: usage
        case .invalidValue, .encodingFailed, .decodingFailed, .typeMismatch: dataError
        case .notFound: noInput
        case .permissionDenied: permissionDenied
        case .busy: temporaryFailure
        case .corrupted, .incompatibleFormat, .ioFailure, .storageFull, .closed: ioError
        default: software
        }
    }
}

/// Prints a message to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("anydefaults: " + message + "\n").utf8))
}

/// Runs `body`, turning a store error into a message on standard error and its exit status.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as DefaultsError {
        printError(error.description)
        throw ExitCode(ExitStatus.forError(error))
    }
}

/// Whether standard output is a terminal: progress is shown only then.
var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
