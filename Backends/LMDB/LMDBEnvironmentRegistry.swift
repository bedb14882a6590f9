import AnyDefaultsCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide table of open LMDB environments, by canonical directory path.
///
/// LMDB forbids opening one environment twice in a process (closing the second copy's files would
/// drop the first one's locks), so every ``LMDBProvider`` on a directory shares one
/// ``LMDBEnvironment``, which also makes each provider see the others' writes at once. The
/// environment closes when its last provider does.
enum LMDBEnvironmentRegistry {
    private struct Entry {
        var environment: LMDBEnvironment
        var users: Int
    }

    private static let entries = Mutex<[String: Entry]>([:])

    /// The environment for the directory `path`, opened (and the directory created) if needed.
    static func acquire(path: String, options: LMDBProvider.Options) throws(DefaultsError) -> LMDBEnvironment {
        let directory = try canonicalDirectory(path)
        return try entries.withLock { (entries: inout [String: Entry]) throws(DefaultsError) -> LMDBEnvironment in
            if var entry = entries[directory] {
                entry.users += 1
                entries[directory] = entry
                return entry.environment
            }
            let environment = try LMDBEnvironment(path: directory, options: options)
            entries[directory] = Entry(environment: environment, users: 1)
            return environment
        }
    }

    /// Gives back an environment from ``acquire(path:options:)``; closes it after its last user.
    static func release(_ environment: LMDBEnvironment) {
        entries.withLock { entries in
            guard var entry = entries[environment.path], entry.environment === environment else { return }
            entry.users -= 1
            if entry.users > 0 {
                entries[environment.path] = entry
            } else {
                entries.removeValue(forKey: environment.path)
                // Closed under the lock, so that no new environment opens on the path meanwhile.
                environment.close()
            }
        }
    }

    /// Creates the directory `path` (owner-only) if it is missing but its parent exists, and returns
    /// its canonical path, so that different spellings of one directory share one environment.
    private static func canonicalDirectory(_ path: String) throws(DefaultsError) -> String {
        guard !path.isEmpty else {
            throw DefaultsError(
                .invalidConfiguration, "The store's path is empty; give the path of a directory.",
                backend: LMDBProvider.backend, path: path)
        }
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            let code = errno
            guard code == ENOENT else { throw DefaultsError.lmdb(code, "create the store's directory", path: path) }
            let parent = (path as NSString).deletingLastPathComponent
            throw DefaultsError(
                .notFound, "Could not create the store's directory: its parent \(parent) does not exist.",
                backend: LMDBProvider.backend, path: path, cause: LMDBStatus(code))
        }
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw DefaultsError.lmdb(errno, "inspect the store's directory", path: path)
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw DefaultsError(
                .invalidConfiguration,
                "The store's path names a file; an LMDB store is a directory (holding data.mdb and lock.mdb).",
                backend: LMDBProvider.backend, path: path)
        }
        guard let resolved = realpath(path, nil) else {
            throw DefaultsError.lmdb(errno, "resolve the store's directory", path: path)
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
