#if !canImport(Darwin)
import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// One suite's property-list file in Foundation's preferences directory, and the file-system work
/// on it: reading with a stamp, replacing it atomically, locking against other writers, moving a
/// damaged file aside.
///
/// Foundation on Linux rewrites this file in place (truncate, then write), so a crash can leave it
/// empty or half written and a reader can catch it half written. The provider therefore writes a
/// temporary file, syncs it and renames it over the suite file, and retries a read that looks torn.
struct PropertyListFile: Sendable {
    /// The directory that holds the file.
    let directory: String
    /// The file name, `<suite>.plist`.
    let name: String

    /// The file's path.
    var path: String { directory + "/" + name }

    /// The most bytes the name of a file written beside the suite file adds to its name:
    /// `.corrupted-<UTC time>-<n>` of a damaged file moved aside (the temporary files' overhead,
    /// ``FileReplacement/temporaryNameOverhead``, is about as long).
    static let longestSidecarSuffix = FileReplacement.longestMovedAsideSuffix

    /// What identifies one version of the file: replaced files get a new inode, files rewritten in
    /// place a new size or modification time.
    typealias Stamp = FileStamp

    /// What the file holds.
    enum Content {
        /// There is no file: the suite is empty.
        case absent
        /// The file's top-level dictionary.
        case dictionary([String: PropertyListNode], Stamp)
        /// The file is not a property list holding a dictionary.
        case corrupted(DefaultsError, Stamp)
    }

    /// Why a file was judged damaged. It never quotes the file, whose text may hold secrets.
    typealias DamageReason = PropertyListParser.Failure

    /// How often, and how far apart, a read that looks torn is retried before the file is judged
    /// damaged: Foundation may be rewriting it in place at that moment.
    static let readAttempts = 3
    static let retryPause: useconds_t = 20_000

    // MARK: Reading

    /// The stamp of the file as it is now, or `nil` if there is none.
    func stamp() throws(DefaultsError) -> Stamp? {
        do {
            return try FileReplacement.status(of: path).map(Stamp.init)
        } catch where error.number == ENOTDIR {
            return nil
        } catch {
            throw failure("Could not examine the suite file.", error)
        }
    }

    /// Reads and parses the file. A file that is empty or does not parse is read again a few times
    /// before it is reported as ``Content/corrupted(_:_:)``; an empty file that stays empty is an
    /// empty suite (Foundation treats it so, and there is nothing in it to protect).
    func readContent() throws(DefaultsError) -> Content {
        var attempt = 1
        while true {
            guard let (bytes, stamp) = try readOnce() else { return .absent }
            let reason: DamageReason
            if bytes.isEmpty {
                if attempt >= Self.readAttempts { return .dictionary([:], stamp) }
                reason = DamageReason(description: "the file is empty")
            } else {
                switch Self.parse(bytes) {
                case .success(let dictionary): return .dictionary(dictionary, stamp)
                case .failure(let damage): reason = damage
                }
            }
            if attempt >= Self.readAttempts {
                let error = DefaultsError(
                    .corrupted,
                    "The suite file is not a valid property list (\(reason)); it was left untouched. "
                        + "Repair or remove it, or open the provider with recoverCorruptedFile (recover=on in a store string) to move it aside.",
                    backend: UserDefaultsProvider.backend, path: path, cause: reason)
                return .corrupted(error, stamp)
            }
            attempt += 1
            usleep(Self.retryPause)
        }
    }

    private func readOnce() throws(DefaultsError) -> ([UInt8], Stamp)? {
        // Non-blocking, regular files only: a FIFO at the path must not hang the reader.
        do {
            // Through `target(of:)`: a link made since the suite was opened is followed only as
            // a write would follow it.
            guard let (bytes, info) = try FileContents.read(try FileReplacement.target(of: path)) else { return nil }
            return (bytes, Stamp(info))
        } catch where error.number == ENOTDIR {
            return nil
        } catch {
            throw failure("Could not read the suite file.", error)
        }
    }

    /// Parses a property list whose top level must be a dictionary (``PropertyListParser``).
    /// A suite file may hold keys that are equal after normalization (Foundation keeps them
    /// apart): the last one wins.
    static func parse(_ bytes: [UInt8]) -> Result<[String: PropertyListNode], DamageReason> {
        PropertyListParser.dictionary(from: bytes, rejectingDuplicateKeys: false)
    }

    /// The whole content of the file at `path`.
    static func readAll(path: String) throws(SystemCallError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .last("open") }
        defer { close(descriptor) }
        return try FileContents.readAll(descriptor, path: path)
    }

    // MARK: Writing

    /// Replaces the file with a binary property list of `dictionary`, or removes it when
    /// `dictionary` is empty (as Foundation does), durably, through ``FileReplacement``: the new
    /// content is synced before it replaces the old, and the directory is synced after; the file
    /// keeps its owner and mode; a read-only file is refused. A symbolic link at the path is
    /// written through (its target is replaced, or created when the link dangles) and stays a
    /// link: emptying such a suite writes an empty dictionary to the target rather than removing
    /// it. Call it holding `lock`.
    ///
    /// - Returns: The new file's stamp, or `nil` when the file was removed.
    func replace(with dictionary: [String: PropertyListNode], holding lock: DirectoryLock) throws(DefaultsError) -> Stamp? {
        do throws(SystemCallError) {
            let target = try FileReplacement.target(of: path)
            if dictionary.isEmpty, target == path {
                var info = stat()
                guard lstat(path, &info) == 0 else {
                    guard errno == ENOENT else { throw .last("lstat", path: path) }
                    return nil
                }
                try FileReplacement.checkRegular(info, call: "unlink", path: path)
                try FileReplacement.checkWritable(path)
                guard unlink(path) == 0 || errno == ENOENT else { throw .last("unlink", path: path) }
                lock.syncDirectory()
                return nil
            }
            try FileReplacement.replace(target, with: BinaryPropertyListWriter.write(dictionary))
        } catch {
            throw failure("Could not write the suite file; it was left as it was.", error)
        }
        return try stamp()
    }

    /// Renames a damaged file to `<name>.corrupted-<UTC time>` next to it, so that nothing in it is
    /// lost, and returns the new path. Call it holding `lock`.
    func moveAside(holding lock: DirectoryLock) throws(DefaultsError) -> String {
        do throws(SystemCallError) {
            return try FileReplacement.moveAside(path)
        } catch {
            throw failure("Could not move the damaged suite file aside.", error)
        }
    }

    // MARK: Locking

    /// An exclusive `flock` on the preferences directory, held by writers of this library in every
    /// process while they read, change and replace a suite file; released when the lock is
    /// released (also when its process dies).
    ///
    /// The directory rather than the file is locked because the file is replaced on every write,
    /// and a lock file would be one more file in the user's configuration directory.
    final class DirectoryLock {
        private var descriptor: Int32

        fileprivate init(descriptor: Int32) { self.descriptor = descriptor }

        /// Makes renames and removals in the directory durable.
        func syncDirectory() {
            if descriptor >= 0 { _ = fsync(descriptor) }
        }

        /// Releases the lock; releasing it again does nothing.
        func unlock() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }

        deinit { unlock() }
    }

    /// Takes the directory lock, waiting up to `timeout` for other writers, and creates the
    /// directory (mode 0700, as Foundation does) when `create` is set. Returns `nil` when the
    /// directory does not exist and `create` is not set.
    func lockDirectory(timeout: Duration, create: Bool) throws(DefaultsError) -> DirectoryLock? {
        var descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0, errno == ENOENT {
            guard create else { return nil }
            try makeDirectory(directory)
            descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            throw failure("Could not open the preferences directory.", .last("open"), path: directory)
        }
        let lock = DirectoryLock(descriptor: descriptor)
        var wait = FileLockWait(timeout: timeout)
        while true {
            do throws(SystemCallError) {
                if try FileLockWait.tryLock(descriptor, path: directory) { return lock }
            } catch {
                throw failure("Could not lock the preferences directory.", error, path: directory)
            }
            try wait.pause(
                lockOn: descriptor,
                orBusy: "Another process kept the preferences directory locked for longer than the lock timeout (UserDefaultsProvider.Options.lockTimeout, or locktimeout=SECONDS in a store string).",
                backend: UserDefaultsProvider.backend, path: directory)
        }
    }

    /// Creates the preferences directory (mode 0700, as Foundation does) if it is missing.
    func createDirectory() throws(DefaultsError) {
        try makeDirectory(directory)
    }

    private func makeDirectory(_ path: String) throws(DefaultsError) {
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        let failed = SystemCallError.last("mkdir")
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard failed.number == ENOENT, !parent.isEmpty, parent != path else {
            throw failure("Could not create the preferences directory.", failed, path: path)
        }
        try makeDirectory(parent)
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw failure("Could not create the preferences directory.", .last("mkdir"), path: path)
        }
    }

    private func failure(_ message: String, _ cause: SystemCallError, path: String? = nil) -> DefaultsError {
        DefaultsError(cause.code, message, backend: UserDefaultsProvider.backend, path: path ?? self.path, cause: cause)
    }
}
#endif
