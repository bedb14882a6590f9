import AnyDefaultsPlatform

/// Reading a whole regular file without ever blocking on something that is not one: the one
/// reader behind the JSON file and UserDefaults backends and configuration files.
///
/// The file is opened non-blocking, so that a FIFO (or a link to one) at the path returns at once
/// instead of waiting for a writer, and its type is checked on the open descriptor: anything but
/// a regular file is refused (``SystemCallError/notRegularFile(call:path:kind:)``, `EISDIR` for a
/// directory).
///
/// ```swift
/// guard let (bytes, info) = try FileContents.read("/etc/app/settings.json") else { return [:] }
/// ```
package enum FileContents {
    /// The largest file read by default: the whole file is held in memory, and a settings file
    /// this large is a mistake (it fails with `EFBIG` rather than exhausting memory).
    package static let defaultMaximumSize = 1 << 30

    /// The bytes of the regular file at `path` and the status of what was read, or `nil` if there
    /// is no file (`ENOENT`).
    ///
    /// - Throws: the failing call's error; `EFBIG` beyond `maximumSize`.
    package static func read(_ path: String, maximumSize: Int = defaultMaximumSize) throws(SystemCallError) -> (bytes: [UInt8], info: stat)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .last("open", path: path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .last("fstat", path: path) }
        try FileReplacement.checkRegular(info, call: "open", path: path)
        guard info.st_size <= maximumSize else { throw SystemCallError(call: "read", path: path, number: EFBIG) }
        return (try readAll(descriptor, sizeHint: Int(info.st_size), maximumSize: maximumSize, path: path), info)
    }

    /// Everything `descriptor` yields until its end, at most `maximumSize` bytes (`EFBIG` beyond).
    package static func readAll(_ descriptor: Int32, sizeHint: Int = 0, maximumSize: Int = defaultMaximumSize, path: String? = nil) throws(SystemCallError) -> [UInt8] {
        // One byte more than the size, so that the usual read ends without growing the buffer.
        var bytes = [UInt8](repeating: 0, count: max(min(sizeHint, maximumSize), 0) + 1)
        var filled = 0
        while true {
            if filled == bytes.count {
                // The file grew while being read, or a stream has more.
                guard filled <= maximumSize else { throw SystemCallError(call: "read", path: path, number: EFBIG) }
                bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096)))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .last("read", path: path)
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= maximumSize else { throw SystemCallError(call: "read", path: path, number: EFBIG) }
        bytes.removeSubrange(filled...)
        return bytes
    }
}

/// The system's `read(2)`: inside ``FileContents`` the name is its own method.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
