import AnyDefaults
import Foundation

import AnyDefaultsPlatform

/// Reading a whole input file, or standard input for `-`.
///
/// A regular file is read as it is. A stream is read to its end: standard input, a pipe, a FIFO
/// (waiting for its writer, as `cat` does), `/dev/stdin` or a process substitution
/// (`<(command)`), a terminal. The file is first opened without waiting, so that its type is
/// known before anything blocks; a directory, a socket or a block device is refused.
enum InputFile {
    static func read(_ path: String) throws(CommandFailure) -> Data {
        if path == "-" { return try readAll(STDIN_FILENO, name: "standard input") }
        let path = HomePath.expanded(path)
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw failure(path, code)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFCHR:
            defer { close(descriptor) }
            let flags = fcntl(descriptor, F_GETFL)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
            return try readAll(descriptor, name: path)
        case S_IFIFO:
            // A FIFO opened without waiting reads as ended until a writer comes: open it again,
            // waiting for the writer (a pipe, such as `<(command)`, has one already).
            close(descriptor)
            let reader = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC)
            guard reader >= 0 else { throw failure(path, errno) }
            defer { close(reader) }
            return try readAll(reader, name: path)
        case S_IFDIR:
            close(descriptor)
            throw CommandFailure(ExitStatus.noInput, "cannot read \(path): it is a directory")
        default:
            close(descriptor)
            throw CommandFailure(ExitStatus.noInput, "cannot read \(path): it is not a file, a pipe or a terminal")
        }
    }

    private static func readAll(_ descriptor: Int32, name: String) throws(CommandFailure) -> Data {
        do {
            return Data(try FileContents.readAll(descriptor, path: name))
        } catch {
            throw failure(name, error.number)
        }
    }

    private static func failure(_ path: String, _ code: Int32) -> CommandFailure {
        switch code {
        case ENOENT, ENOTDIR: CommandFailure(ExitStatus.noInput, "cannot read \(path): no such file")
        case EACCES, EPERM: CommandFailure(ExitStatus.permissionDenied, "cannot read \(path): \(String(cString: strerror(code)))")
        default: CommandFailure(ExitStatus.noInput, "cannot read \(path): \(String(cString: strerror(code)))")
        }
    }
}
