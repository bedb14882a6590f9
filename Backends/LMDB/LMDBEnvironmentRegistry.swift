import AnyDefaultsCore
import Foundation
import Synchronization

import AnyDefaultsPlatform

/// The process-wide table of open LMDB environments, by the identity (device and inode) of the
/// store's directory and of its `data.mdb` and `lock.mdb`.
///
/// LMDB forbids opening one environment twice in a process (closing the second copy's files would
/// drop the first one's locks, and their reader slots clash: `MDB_BAD_RSLOT`), so every
/// ``LMDBProvider`` on a store shares one ``LMDBEnvironment``, which also makes each provider see
/// the others' writes at once. "One store" is decided by identity, not by path: another spelling,
/// a symbolic link to the directory, a bind mount of it, or a directory whose files are hard links
/// to the store's all find the open environment. The environment closes when its last provider
/// does.
enum LMDBEnvironmentRegistry {
    private struct Entry {
        var environment: LMDBEnvironment
        var users: Int
    }

    private static let entries = Mutex<[Entry]>([])

    /// The environment for the directory `path`, opened (and the directory created) if needed.
    static func acquire(path: String, options: LMDBProvider.Options) throws(DefaultsError) -> LMDBEnvironment {
        let directory = try canonicalDirectory(path)
        return try entries.withLock { (entries: inout [Entry]) throws(DefaultsError) -> LMDBEnvironment in
            let identities = identities(of: directory)
            // By what each open environment's path leads to now, not what it led to when opened:
            // the files of a store removed meanwhile may have given their inode numbers to new ones.
            if let index = entries.firstIndex(where: { !Self.identities(of: $0.environment.path).isDisjoint(with: identities) }) {
                let environment = entries[index].environment
                // Closed after its store was removed: the store at the path now is opened (or made).
                if environment.isClosedForReplacement { try environment.reopen() }
                entries[index].users += 1
                return environment
            }
            let environment = try LMDBEnvironment(path: directory, options: options)
            entries.append(Entry(environment: environment, users: 1))
            return environment
        }
    }

    /// Gives back an environment from ``acquire(path:options:)``; closes it after its last user.
    static func release(_ environment: LMDBEnvironment) {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.environment === environment }) else { return }
            entries[index].users -= 1
            guard entries[index].users == 0 else { return }
            entries.remove(at: index)
            // Closed under the lock, so that no new environment opens on the store meanwhile.
            environment.close()
        }
    }

    /// The identities of the directory and of the files in it that make it one store; those that
    /// do not exist are left out.
    private static func identities(of directory: String) -> Set<UInt64> {
        Set([directory, directory + "/data.mdb", directory + "/lock.mdb"].map(LMDBEnvironment.identity(atPath:)))
            .subtracting([0])
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
                backend: LMDBProvider.backend, path: path, cause: LMDBFailure(code))
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
