import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// A provider that keeps values in a human-readable JSON file: keys sorted, pretty-printed,
/// diff-friendly, safe to edit by hand, and exact for every ``AnyDefaultsCore/DefaultsValue``
/// (the encoding is in Docs/Backends.md, "JSON file").
///
/// ```swift
/// let store = try JSONFileProvider(path: "~/.config/myapp/settings.json")
/// try store.setValue(.string("dark"), forKey: "ui.theme")
/// try store.apply([.set("window.width", .int(1280)), .remove("legacy.size")])
/// ```
///
/// - Writes are crash-safe (temporary file, sync, rename, sync of the directory) and atomic per
///   batch: one ``apply(_:)`` is one file write. Writing the value already stored writes nothing.
/// - Several processes can share the file: writers take an advisory lock on `<file>.lock` and
///   read the file again first if it changed, so no process loses another's update.
/// - All instances on one file in a process share their state: each sees the others' writes at
///   once, and their observers get them as external events.
/// - Reads are served from memory. Changes made by other processes (or by hand) are picked up as
///   soon as the file changes (inotify on Linux, a 50 ms `stat` poll elsewhere) and reported as
///   external events; also before every write, on ``reload()``, and, if
///   ``Options/refreshInterval`` is set, by reads.
/// - A file that is not valid is never overwritten: opening or writing throws `corrupted` with
///   the line and column, unless ``Options/corruptionPolicy`` says to move it aside.
/// - New files are created readable and writable by the owner only (`0600`); an existing file
///   keeps its permissions.
public final class JSONFileProvider: RefreshingProvider {
    /// The name in errors: `"JSONFile"`.
    public static let backend = "JSONFile"

    /// The file, as an absolute path with symbolic links resolved.
    public let path: String
    /// The options this instance was opened with.
    public let options: Options

    private let store: JSONFileStore
    private let broadcaster = ChangeBroadcaster()
    private let instance: Int

    /// Opens the settings file at `path` (`~` is expanded; relative paths start at the current
    /// directory). A missing file is an empty store; it is created by the first write.
    ///
    /// - Throws: `corrupted` for a file that is not valid (with the line and column), `notFound`
    ///   or `permissionDenied` for its directory, `invalidConfiguration` for a path that names a
    ///   directory.
    /// The files open in this process, by canonical path: every instance on one file shares one
    /// store and sees the others' writes at once. (By path, not inode: every write replaces the
    /// file by `rename`.)
    private static let openStores = SharedInstances<String, JSONFileStore>()

    public init(path: String, options: Options = Options()) throws(DefaultsError) {
        self.path = try Self.canonicalPath(path, createsDirectories: options.createsDirectories)
        self.options = options
        let path = self.path
        let (store, isNew) = try Self.openStores.object(for: path) { () throws(DefaultsError) in
            try JSONFileStore(path: path, options: options)
        }
        self.store = store
        instance = store.attach(broadcaster)
        if options.watchesExternalChanges { store.watchForExternalChanges() }
        if isNew {
            if let recovery = store.initialRecovery { options.onRecovery?(recovery) }
        } else {
            // An instance opened later sees what other processes wrote in between.
            try store.reload(options: options)
        }
    }

    /// Opens the settings file at a `file:` URL.
    public convenience init(url: URL, options: Options = Options()) throws(DefaultsError) {
        guard url.isFileURL else {
            throw DefaultsError(
                .invalidConfiguration, "A JSON settings file needs a file URL.", backend: Self.backend,
                path: url.absoluteString)
        }
        try self.init(path: url.path, options: options)
    }

    deinit {
        store.detach(instance)
    }

    public var capabilities: DefaultsCapabilities {
        options.watchesExternalChanges ? [.persistent, .atomicBatch, .multiProcess, .externalChanges] : [.persistent, .atomicBatch, .multiProcess]
    }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        try refreshIfConfigured()
        return store.value(forKey: key)
    }

    public func keys() throws(DefaultsError) -> [String] {
        try refreshIfConfigured()
        return Array(store.values().keys)
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try refreshIfConfigured()
        return store.values()
    }

    public func setValue(_ value: DefaultsValue, forKey key: String) throws(DefaultsError) {
        try naming(key) { () throws(DefaultsError) in try apply([.set(key, value)]) }
    }

    public func removeValue(forKey key: String) throws(DefaultsError) {
        try naming(key) { () throws(DefaultsError) in try apply([.remove(key)]) }
    }

    /// Removes `key` in one locked rewrite of the file and tells whether it was there.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        var existed = false
        try naming(key) { () throws(DefaultsError) in
            try store.update(from: instance, options: options) { values in
                var values = values
                existed = values.removeValue(forKey: key) != nil
                return (values, existed ? [DefaultsChangeEvent(key: key, newValue: nil)] : [])
            }
        }
        return existed
    }

    /// Runs `body`, adding `key` to an error that names none (a failed file write).
    private func naming(_ key: String, _ body: () throws(DefaultsError) -> Void) throws(DefaultsError) {
        do {
            try body()
        } catch {
            var error = error
            if error.key == nil { error.key = key }
            throw error
        }
    }

    /// Applies `changes` in order with one write of the file; nothing is written if no value
    /// changes.
    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        guard !changes.isEmpty else { return }
        try store.update(from: instance, options: options) { values in Self.applying(changes, to: values) }
    }

    /// `values` with `changes` applied, and the events of the keys whose value changed.
    private static func applying(
        _ changes: [DefaultsChange], to values: [String: DefaultsValue]
    ) -> (values: [String: DefaultsValue], events: [DefaultsChangeEvent]) {
        var values = values
        var events: [DefaultsChangeEvent] = []
        for change in changes where values[change.key] != change.value {
            values[change.key] = change.value
            events.append(DefaultsChangeEvent(key: change.key, newValue: change.value))
        }
        return (values, events)
    }

    /// Compares and applies with one write of the file, under the lock that every writer of
    /// every process holds: atomic against all of them. Nothing is written if a value differs or
    /// no value changes.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        try ConditionalWrite.apply(changes, ifUnchanged: expected, backend: Self.backend, update: update)
    }

    /// Removes the unchanged keys with one write of the file, under the lock that every writer
    /// of every process holds: atomic against all of them.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        try ConditionalWrite.removeValues(ifUnchanged: expected, backend: Self.backend, update: update)
    }

    /// One read-modify-write of the file: `decide` chooses the changes from the values stored now.
    private func update(_ decide: ([String: DefaultsValue]) -> [DefaultsChange]) throws(DefaultsError) {
        try store.update(from: instance, options: options) { values in Self.applying(decide(values), to: values) }
    }

    /// The settings file and its lock file.
    public var storeIdentity: DefaultsStoreIdentity? {
        .files(path, sidecars: [path + ".lock"])
    }

    /// The identity of the store at `path` (an absolute path), without opening it: the file a
    /// link at `path` leads to, and the lock file beside that file.
    public static func storeIdentity(path: String) -> DefaultsStoreIdentity {
        let target = (try? FileReplacement.target(of: path)) ?? path
        return .files(target, sidecars: [target + ".lock"])
    }

    public func removeAll() throws(DefaultsError) {
        try store.update(from: instance, options: options) { values in
            ([:], values.keys.sorted { $0.utf8Precedes($1) }
                .map { DefaultsChangeEvent(key: $0, newValue: nil) })
        }
    }

    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        broadcaster.observe(handler)
    }

    /// Reads the file again if another process changed it since this process last read or wrote
    /// it, and reports each key that differs as an external change event.
    ///
    /// - Throws: `corrupted` if the file is no longer valid (the values in memory stay as they
    ///   were), unless ``Options/corruptionPolicy`` moves it aside.
    public func refresh() throws(DefaultsError) {
        try store.reload(options: options)
    }

    /// The former name of ``refresh()``.
    @available(*, deprecated, renamed: "refresh()")
    public func reload() throws(DefaultsError) {
        try refresh()
    }

    private func refreshIfConfigured() throws(DefaultsError) {
        if let interval = options.refreshInterval {
            try store.refresh(ifOlderThan: interval, options: options)
        }
    }

    /// An absolute path with symbolic links resolved, so that every spelling of one file shares
    /// one store. A link to the settings file stays a link: writes replace the file it names, and
    /// a dangling link's target is created by the first write (``FileReplacement/target(of:)``,
    /// which also refuses a link planted by another user in a shared directory). A name too long
    /// for the files written beside it is refused here, not on every write.
    static func canonicalPath(_ path: String, createsDirectories: Bool) throws(DefaultsError) -> String {
        func invalid(_ message: String) -> DefaultsError {
            DefaultsError(.invalidConfiguration, message, backend: backend, path: path)
        }
        guard !path.isEmpty else { throw invalid("The path of the settings file is empty.") }
        // C calls end a path at its first NUL, which would quietly name another file.
        guard !path.utf8.contains(0) else { throw invalid("The path of the settings file holds a NUL character.") }
        var absolute = (path as NSString).expandingTildeInPath
        if !absolute.hasPrefix("/") {
            absolute = FileManager.default.currentDirectoryPath + "/" + absolute
        }
        let target: String
        do {
            target = try FileReplacement.target(of: absolute)
        } catch {
            throw DefaultsError(error.code, "The path of the settings file cannot be followed.", backend: backend, path: absolute, cause: error)
        }
        let canonical = try canonicalTarget(target, createsDirectories: createsDirectories)
        do {
            try FileReplacement.checkNameLength(of: canonical, longestSuffix: JSONFileDisk.longestSidecarSuffix)
        } catch {
            throw DefaultsError(
                .invalidConfiguration, "The name of the settings file is too long for the files this store writes beside it.",
                backend: backend, path: canonical, cause: error)
        }
        return canonical
    }

    /// `target` (a path without a final link) with its directory resolved, the directory created
    /// if allowed.
    private static func canonicalTarget(_ target: String, createsDirectories: Bool) throws(DefaultsError) -> String {
        if let resolved = realPath(target) { return resolved }
        let directory = FileReplacement.directory(of: target)
        let name = FileReplacement.name(of: target)
        guard !target.hasSuffix("/"), !name.isEmpty, name != ".", name != ".." else {
            throw DefaultsError(.invalidConfiguration, "The path of the settings file must end with a file name.", backend: backend, path: target)
        }
        if createsDirectories, !AtomicFile.exists(directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DefaultsError(
                    .permissionDenied, "Could not create the directory of the settings file.", backend: backend,
                    path: directory, cause: error)
            }
        }
        guard let resolvedDirectory = realPath(directory) else {
            throw DefaultsError(
                .notFound, "The directory of the settings file does not exist.", backend: backend, path: directory,
                cause: SystemCallError.last("realpath", path: directory))
        }
        return (resolvedDirectory == "/" ? "" : resolvedDirectory) + "/" + name
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
