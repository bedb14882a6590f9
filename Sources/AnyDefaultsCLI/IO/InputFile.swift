import AnyDefaults
import Foundation

import AnyDefaultsPlatform

/// Reading a whole input file, or standard input for `-`.
///
/// A regular file is read as it is. A stream is read to its end: standard input, a pipe, a FIFO
/// (waiting for its writer, as `cat` does), `/dev/stdin` or a process substitution
/// (`<(command)`), a terminal. The file is first opened without waiting, so that its type is
/// known before anything blocks; a directory, a socket or a block device is refused.
///
/// The first byte that is not white space (or a byte-order mark) is shown to `start` before the
/// rest is read, so that input that cannot be what the caller reads (`/dev/zero`, a binary file)
/// is refused at once rather than after reading it to its end, which may never come. At most
/// ``FileContents/defaultMaximumSize`` bytes are read.
enum InputFile {
    static func read(_ path: String, start: (UInt8) throws(CommandFailure) -> Void = { _ in }) throws(CommandFailure) -> Data {
        if path == "-" { return try readAll(STDIN_FILENO, name: "standard input", start: start) }
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
            return try readAll(descriptor, name: path, start: start)
        case S_IFIFO:
            // A FIFO opened without waiting reads as ended until a writer comes: open it again,
            // waiting for the writer (a pipe, such as `<(command)`, has one already).
            close(descriptor)
            let reader = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC)
            guard reader >= 0 else { throw failure(path, errno) }
            defer { close(reader) }
            return try readAll(reader, name: path, start: start)
        case S_IFDIR:
            close(descriptor)
            throw CommandFailure(ExitStatus.noInput, "cannot read \(path): it is a directory")
        default:
            close(descriptor)
            throw CommandFailure(ExitStatus.noInput, "cannot read \(path): it is not a file, a pipe or a terminal")
        }
    }

    private static func readAll(
        _ descriptor: Int32, name: String, start: (UInt8) throws(CommandFailure) -> Void
    ) throws(CommandFailure) -> Data {
        // The head first, up to its first significant byte (or 64 bytes).
        var head = [UInt8](repeating: 0, count: 64)
        var filled = 0
        var significant: UInt8?
        while filled < head.count, significant == nil {
            let count = head.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(name, errno)
            }
            if count == 0 { break }
            filled += count
            significant = firstSignificantByte(head[..<filled])
        }
        head.removeSubrange(filled...)
        if let significant { try start(significant) }
        guard filled > 0 else { return Data() }
        do {
            let rest = try FileContents.readAll(descriptor, maximumSize: FileContents.defaultMaximumSize - filled, path: name)
            return Data(head + rest)
        } catch {
            throw failure(name, error.number)
        }
    }

    /// The first byte that is not ASCII white space, after a UTF-8 byte-order mark.
    private static func firstSignificantByte(_ bytes: ArraySlice<UInt8>) -> UInt8? {
        var bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains($0) }
    }

    private static func failure(_ path: String, _ code: Int32) -> CommandFailure {
        switch code {
        case ENOENT, ENOTDIR: CommandFailure(ExitStatus.noInput, "cannot read \(path): no such file")
        case EACCES, EPERM: CommandFailure(ExitStatus.permissionDenied, "cannot read \(path): \(String(cString: strerror(code)))")
        case EFBIG: CommandFailure(ExitStatus.dataError, "cannot read \(path): it holds more than \(FileContents.defaultMaximumSize >> 30) GiB, more than any export")
        default: CommandFailure(ExitStatus.noInput, "cannot read \(path): \(String(cString: strerror(code)))")
        }
    }
}

/// The system's `read(2)`: inside ``InputFile`` the name `read` is its own method.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
