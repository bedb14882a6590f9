import AnyDefaults
import ArgumentParser
import Foundation

/// Exit statuses (from sysexits.h where one fits), documented in `anydefaults --help` and
/// Docs/CLI.md.
enum ExitStatus {
    /// `read` found no such key; `verify` found a failing check.
    static let negative: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    /// A service the command needs does not exist here (`domains` on Apple platforms).
    static let unavailable: Int32 = 69
    static let software: Int32 = 70
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let temporaryFailure: Int32 = 75
    static let permissionDenied: Int32 = 77

    /// The text of `anydefaults --help` that lists them.
    static let summary = """
        Exit status: 0 success; 1 key not found (read) or a failed check (verify); 64 usage or \
        configuration error; 65 bad input data (a value, an import file); 66 an input file is \
        missing or unreadable, or the store a reading command names does not exist; 69 not \
        available on this platform (domains on Apple platforms); 70 internal \
        error; 73 the output file cannot be written; 74 store I/O failure or damaged store; 75 \
        store busy (another process holds it); 77 permission denied; \
        128+N ended by signal N (bench, verify and tour remove their scratch storage first).
        """

    /// The status for a store error.
    static func forError(_ error: DefaultsError) -> Int32 {
        switch error.code {
        case .invalidConfiguration, .invalidKey, .unsupported: usage
        case .invalidValue, .encodingFailed, .decodingFailed, .typeMismatch: dataError
        case .notFound: noInput
        case .permissionDenied: permissionDenied
        case .busy: temporaryFailure
        case .corrupted, .incompatibleFormat, .ioFailure, .storageFull, .closed: ioError
        default: software
        }
    }
}

/// A failure of a command that is not the store's: a file that cannot be read or written, a
/// refused request. Reported as `anydefaults: MESSAGE` with its exit status.
struct CommandFailure: Error, CustomStringConvertible {
    var status: Int32
    var message: String

    init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }

    /// The failure for a file operation that threw `error`, naming `path`.
    static func file(_ path: String, _ action: String, _ error: any Error, status: Int32) -> CommandFailure {
        var reason = (error as NSError).localizedDescription
        if let posix = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError), posix.domain == NSPOSIXErrorDomain,
            let text = strerror(Int32(posix.code))
        {
            reason = String(cString: text)
        }
        return CommandFailure(status, "cannot \(action) \(path): \(reason)")
    }
}

/// Runs `body`, turning a store error or a ``CommandFailure`` into a message on standard error
/// and its exit status.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as DefaultsError {
        throw reported(error)
    } catch let failure as CommandFailure {
        Console.error(failure.message)
        throw ExitCode(failure.status)
    }
}

/// Prints a store error on standard error and returns the exit code for it.
func reported(_ error: DefaultsError) -> ExitCode {
    Console.error(error.description)
    return ExitCode(ExitStatus.forError(error))
}
