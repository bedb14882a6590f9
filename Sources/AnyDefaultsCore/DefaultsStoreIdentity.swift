/// Where a provider keeps its data, so that two providers (or a provider and a file about to be
/// written) can be told to reach the same storage however their paths are spelled.
///
/// A file-based store names its data file and the files it keeps beside it (a lock, a journal),
/// whether or not they exist yet; they are compared by ``FileIdentity`` (device and inode), so
/// hard links, symbolic links, bind mounts, relative and `..` spellings all count as the same
/// store. A store that is not a file (a UserDefaults domain on Apple platforms, a database
/// server) names itself.
///
/// ```swift
/// if let a = source.storeIdentity, let b = destination.storeIdentity, a.overlaps(b) {
///     throw MyError.sameStore
/// }
/// ```
public struct DefaultsStoreIdentity: Sendable, CustomStringConvertible {
    private enum Storage: Sendable {
        case files([String])
        case named(String, String)
    }

    private let storage: Storage

    private init(_ storage: Storage) { self.storage = storage }

    /// A store kept in files: `dataFile`, and the files the backend keeps beside it (a lock file, a
    /// journal), whether or not they exist now.
    public static func files(_ dataFile: String, sidecars: [String] = []) -> DefaultsStoreIdentity {
        DefaultsStoreIdentity(.files([dataFile] + sidecars))
    }

    /// A store that is not a file: `name` as `backend` knows it (a suite, a database URL).
    public static func named(_ name: String, backend: String) -> DefaultsStoreIdentity {
        DefaultsStoreIdentity(.named(backend, name))
    }

    /// The files of a file-based store, the data file first; empty for a named store.
    public var files: [String] {
        if case .files(let files) = storage { return files }
        return []
    }

    /// Whether the two stores share storage now: a file of one is a file of the other (their data
    /// files, or one's data file and the other's lock or journal), or they carry the same name.
    /// Writing one of them could then change or destroy the other.
    public func overlaps(_ other: DefaultsStoreIdentity) -> Bool {
        switch (storage, other.storage) {
        case (.named(let backend, let name), .named(let otherBackend, let otherName)):
            return backend == otherBackend && name == otherName
        case (.files(let mine), .files(let theirs)):
            let identities = Set(mine.compactMap(FileIdentity.init(path:)))
            return theirs.contains { FileIdentity(path: $0).map(identities.contains) ?? false }
        default:
            return false
        }
    }

    /// Whether writing the file at `path` would write one of this store's files (following
    /// symbolic links, as a write does).
    public func contains(file path: String) -> Bool {
        guard let identity = FileIdentity(path: path) else { return false }
        return files.contains { FileIdentity(path: $0) == identity }
    }

    public var description: String {
        switch storage {
        case .files(let files): files.first ?? ""
        case .named(let backend, let name): "\(backend) \(name)"
        }
    }
}
