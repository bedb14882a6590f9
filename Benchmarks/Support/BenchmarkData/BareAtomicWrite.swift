#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bare atomic write the provider is measured against: what any careful program does.
/// Returns whether every step succeeded.
@discardableResult
public func bareAtomicWrite(_ bytes: [UInt8], to path: String, directory: String) -> Bool {
    let temporary = path + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count, fsync(descriptor) == 0, close(descriptor) == 0, rename(temporary, path) == 0 else {
        return false
    }
    let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { close(directoryDescriptor) }
    return directoryDescriptor >= 0 && fsync(directoryDescriptor) == 0
}
