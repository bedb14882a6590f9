import AnyDefaults
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where on disk the SQLite or LMDB store `watch` follows is, as opened: its directory and data
/// file. When the path no longer leads to them (the directory removed, or removed and made again;
/// the data file deleted or replaced), the open provider reads and watches files no one uses any
/// more, and `watch` must open the store again rather than go silent. (A JSON file or a suite is
/// followed by its provider itself, through its directory's watch.)
///
/// Both are held open while watched: a removed directory's inode number could otherwise be given
/// to the one made in its place at once, which would look like the same directory.
final class WatchedLocation: Sendable {
    let dataFile: String
    private let watched: [(path: String, descriptor: Int32)]

    /// `nil` for another backend, or if the files cannot be opened for this (then `watch`
    /// follows only the files it opened).
    init?(_ configuration: StoreConfiguration) {
        guard ["sqlite", "lmdb"].contains(configuration.scheme),
            let dataFile = (try? ProviderRegistry.standard.storeIdentity(of: configuration))?.files.first
        else { return nil }
        self.dataFile = dataFile
        let paths = [(dataFile as NSString).deletingLastPathComponent, dataFile]
        var watched: [(String, Int32)] = []
        for path in paths {
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else {
                for (_, open) in watched { close(open) }
                return nil
            }
            watched.append((path, descriptor))
        }
        self.watched = watched
    }

    deinit {
        for (_, descriptor) in watched { close(descriptor) }
    }

    /// Whether a path no longer leads to the directory or data file held open.
    var hasMoved: Bool {
        watched.contains { path, descriptor in
            var atPath = stat()
            var held = stat()
            guard stat(path, &atPath) == 0, fstat(descriptor, &held) == 0 else { return true }
            return atPath.st_dev != held.st_dev || atPath.st_ino != held.st_ino
        }
    }

    /// Whether the store's data file exists now (the store can be opened without creating it).
    var exists: Bool { FileManager.default.fileExists(atPath: dataFile) }
}
