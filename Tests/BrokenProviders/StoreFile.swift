import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// A key exactly as spelled: equal only to the same Unicode scalars (Swift's `String` equality
/// would merge canonically equivalent spellings, which some defects must keep apart).
struct RawKey: Hashable, Sendable {
    let string: String
    private let scalars: [UInt32]

    init(_ string: String) {
        self.string = string
        scalars = string.unicodeScalars.map(\.value)
    }

    static func == (a: RawKey, b: RawKey) -> Bool { a.scalars == b.scalars }
    func hash(into hasher: inout Hasher) { hasher.combine(scalars) }
}

/// The reference provider's file: `store.bin`, a header (the magic `ADBROKEN` and a 64-bit
/// generation that every commit increments) followed by the core's exact binary encoding of an
/// array of `[key, value]` pairs. Commits write a temporary file and rename it over the store, so
/// a reader or a crash sees one whole generation; `store.lock` serializes writers of all
/// processes with `flock`.
struct StoreFile: Sendable {
    static let magic = Array("ADBROKEN".utf8)
    static let backend = "BrokenFile"

    let path: String
    let lockPath: String

    init(directory: URL) {
        path = directory.appendingPathComponent("store.bin").path
        lockPath = directory.appendingPathComponent("store.lock").path
    }

    /// The generation and size of the file now (`(0, -1)` when there is none), read from its header.
    func stamp() throws(DefaultsError) -> (generation: UInt64, size: Int) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            if errno == ENOENT { return (0, -1) }
            throw failure("open")
        }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, 16, 0) }
        var info = stat()
        fstat(descriptor, &info)
        guard count == 16, Array(header[0..<8]) == Self.magic else { return (0, Int(info.st_size)) }
        return (header[8..<16].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }, Int(info.st_size))
    }

    /// The whole file: its generation and entries (nothing when there is no file).
    func load() throws(DefaultsError) -> (generation: UInt64, size: Int, entries: [(RawKey, DefaultsValue)]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { return (0, -1, []) }
            throw failure("read")
        }
        let bytes = Array(data)
        guard bytes.count >= 16, Array(bytes[0..<8]) == Self.magic else {
            throw DefaultsError(.corrupted, "The store file has no header.", backend: Self.backend, path: path)
        }
        let generation = bytes[8..<16].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        let value: DefaultsValue
        do {
            value = try bytes[16...].withUnsafeBytes { buffer throws(BinaryCodecError) in try BinaryValueCodec.decode(buffer) }
        } catch {
            throw DefaultsError(.corrupted, "The store file is damaged.", backend: Self.backend, path: path, cause: error)
        }
        guard case .array(let items) = value else { throw DefaultsError(.corrupted, "The store file is not a list.", backend: Self.backend, path: path) }
        var entries: [(RawKey, DefaultsValue)] = []
        for item in items {
            guard case .array(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else {
                throw DefaultsError(.corrupted, "The store file holds a bad entry.", backend: Self.backend, path: path)
            }
            entries.append((RawKey(key), pair[1]))
        }
        return (generation, bytes.count, entries)
    }

    /// The bytes of a generation.
    static func bytes(generation: UInt64, entries: [(RawKey, DefaultsValue)]) -> [UInt8] {
        var bytes = magic
        withUnsafeBytes(of: generation.littleEndian) { bytes.append(contentsOf: $0) }
        BinaryValueCodec.append(.array(entries.map { .array([.string($0.0.string), $0.1]) }), to: &bytes)
        return bytes
    }

    /// Writes a generation: to a temporary file renamed over the store (whole or nothing), or,
    /// `inPlace`, truncating the store and writing it in chunks (torn if the process dies).
    func write(generation: UInt64, entries: [(RawKey, DefaultsValue)], inPlace: Bool = false) throws(DefaultsError) {
        let bytes = Self.bytes(generation: generation, entries: entries)
        if inPlace {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else { throw failure("open") }
            defer { close(descriptor) }
            var offset = 0
            while offset < bytes.count {
                let count = min(4_096, bytes.count - offset)
                let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, count) }
                guard written > 0 else { throw failure("write") }
                offset += written
                // A real writer of this kind spends time between chunks (encoding, syscalls).
                usleep(20)
            }
            return
        }
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else { throw failure("write") }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("rename")
        }
    }

    func failure(_ action: String) -> DefaultsError {
        DefaultsError(.ioFailure, "Could not \(action) the store file: \(String(cString: strerror(errno))).", backend: Self.backend, path: path)
    }
}

/// `flock` on `store.lock`, the lock writers of every process take.
final class FileLock: Sendable {
    let descriptor: Int32

    init(path: String) throws(DefaultsError) {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DefaultsError(.ioFailure, "Could not open the lock file.", backend: StoreFile.backend, path: path)
        }
    }

    deinit { close(descriptor) }

    func lock() { while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {} }
    func unlock() { flock(descriptor, LOCK_UN) }
}

/// `write(2)`, named apart from ``StoreFile/write(generation:entries:inPlace:)``.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, buffer, count)
    #else
    Darwin.write(descriptor, buffer, count)
    #endif
}
