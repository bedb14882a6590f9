import AnyDefaultsCore
import Foundation

/// The file side of a store: reads the settings file when it changed, writes it atomically,
/// sets a bad file aside, and holds the cross-process lock.
///
/// Not thread-safe: ``JSONFileStore`` keeps it behind the mutex that serializes file access.
struct JSONFileDisk {
    let path: String
    let lock: LockFile
    /// The stamp of the file whose contents the store holds; `nil` when there was no file.
    private(set) var stamp: FileStamp?
    /// The lock file's generation when the store last read or wrote the file.
    private(set) var generation: UInt64 = 0
    private var loaded = false

    init(path: String) {
        self.path = path
        lock = LockFile(path: path + ".lock")
    }

    /// The most bytes the name of a file written beside the settings file adds to its name:
    /// `.corrupted-<UTC time>-<n>` of a file moved aside (`.lock` and the temporary files' are
    /// shorter).
    static let longestSidecarSuffix = FileReplacement.longestMovedAsideSuffix

    /// The contents of the file, and where a bad file was moved if it had to be.
    struct Contents {
        var values: [String: DefaultsValue]
        var recovery: JSONFileRecovery?
    }

    /// Reads the file if it changed since it was last read or written here; `nil` if it did not.
    ///
    /// A missing file reads as an empty store. A bad file throws `corrupted` and is left as it
    /// is, unless `options` ask to move it aside, which happens under the cross-process lock.
    mutating func readIfChanged(
        _ options: JSONFileProvider.Options, holdingLock: Bool
    ) throws(DefaultsError) -> Contents? {
        // The generation is read before the file: a writer bumps it after its rename, so what is
        // recorded is never newer than what is read, and a mismatch later only costs a re-read.
        let generation = lock.generation()
        let current: FileStamp?
        do { current = try AtomicFile.stamp(path) } catch { throw failure(error, "Could not inspect the settings file.") }
        if loaded, generation == self.generation, current == stamp { return nil }

        let file: (bytes: [UInt8], stamp: FileStamp)?
        do { file = try AtomicFile.contents(at: path) } catch { throw failure(error, "Could not read the settings file.") }
        guard let file else {
            (stamp, self.generation, loaded) = (nil, generation, true)
            return Contents(values: [:])
        }
        do {
            let values = try JSONFileDecoder.decode(file.bytes)
            (stamp, self.generation, loaded) = (file.stamp, generation, true)
            return Contents(values: values)
        } catch {
            let corrupted = DefaultsError(
                .corrupted,
                "The settings file is not valid JSON for this store at line \(error.line), column \(error.column): "
                    + "\(error.reason). It was left unchanged; correct or remove it, or open the store with "
                    + "corruptionPolicy .moveAside (recovery=moveaside in a store string) to set it aside and start empty.",
                backend: JSONFileProvider.backend, path: path, cause: error)
            guard options.corruptionPolicy == .moveAside else { throw corrupted }
            guard holdingLock else {
                // Look again under the lock: another process may have replaced the file meanwhile.
                try acquireLock(options)
                defer { lock.unlock() }
                loaded = false
                return try readIfChanged(options, holdingLock: true)
            }
            return Contents(values: [:], recovery: try moveAside(corrupted))
        }
    }

    /// Writes `values` as the new file. Call it holding the lock, after ``readIfChanged(_:holdingLock:)``.
    mutating func write(_ values: [String: DefaultsValue]) throws(DefaultsError) {
        let bytes = JSONFileEncoder.encode(values)
        do {
            stamp = try AtomicFile.replace(path, with: bytes)
        } catch {
            throw failure(error, "Could not write the settings file; it holds what it held before.")
        }
        generation &+= 1
        lock.setGeneration(generation)
    }

    /// Takes the cross-process lock, or throws `busy` after `options.lockTimeout`.
    func acquireLock(_ options: JSONFileProvider.Options) throws(DefaultsError) {
        let acquired: Bool
        do { acquired = try lock.lock(timeout: options.lockTimeout) } catch {
            throw failure(error, "Could not open the lock file next to the settings file.", path: lock.path)
        }
        guard acquired else {
            throw DefaultsError(
                .busy, "Another process held the lock on the settings file for longer than \(options.lockTimeout) (JSONFileProvider.Options.lockTimeout, or locktimeout=SECONDS in a store string).",
                backend: JSONFileProvider.backend, path: lock.path)
        }
    }

    /// Renames the bad file to `<name>.corrupted-<UTC time>` next to it, so that nothing is
    /// lost, and starts empty. Call it holding the lock.
    private mutating func moveAside(_ error: DefaultsError) throws(DefaultsError) -> JSONFileRecovery {
        let target: String
        do { target = try FileReplacement.moveAside(path) } catch {
            throw failure(error, "Could not move the damaged settings file aside.")
        }
        generation = lock.generation() &+ 1
        lock.setGeneration(generation)
        (stamp, loaded) = (nil, true)
        return JSONFileRecovery(movedTo: target, error: error)
    }

    private func failure(_ error: SystemCallError, _ message: String, path: String? = nil) -> DefaultsError {
        DefaultsError(error.code, message, backend: JSONFileProvider.backend, path: path ?? self.path, cause: error)
    }
}
