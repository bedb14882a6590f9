import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// A provider over Foundation's user defaults: the standard suite or a named suite, stored where
/// and how `UserDefaults` stores it, so that plain `UserDefaults` code reading or writing the same
/// suite sees ordinary values.
///
/// ```swift
/// let store = try UserDefaultsProvider(suiteName: "com.example.app")
/// try store.setValue(.bool(true), forKey: "onboarded")
/// UserDefaults(suiteName: "com.example.app")?.bool(forKey: "onboarded")   // true
/// ```
///
/// Values are stored as the native property-list types (`Bool`, `Int64`, `Double`, `String`,
/// `Data`, `Date`, arrays, dictionaries); booleans, integers and doubles stay distinct both ways.
/// Only the suite's own persistent domain is read: not `NSGlobalDomain`, registration defaults or
/// launch arguments.
///
/// On Apple platforms the provider goes through CFPreferences (`cfprefsd`). On Linux it reads and
/// writes the suite's property-list file itself — atomically, durably and under a lock shared by
/// every process using this library — because Foundation there rewrites the file in place and
/// only on `synchronize()`; see `Docs/Backends.md` for what each platform promises.
public final class UserDefaultsProvider: RefreshingProvider {
    static let backend = "UserDefaults"

    #if canImport(Darwin)
    typealias Store = PreferencesDomainStore
    #else
    typealias Store = PropertyListFileStore
    #endif

    /// The suite, or `nil` for the standard suite (`UserDefaults.standard`).
    public let suiteName: String?
    /// The options the provider was opened with.
    public let options: Options

    private let store: Store
    private let broadcaster = ChangeBroadcaster()
    private let instanceID: Int
    private let watching: Bool

    /// Opens the suite `suiteName`, or the standard suite for `nil`.
    ///
    /// Instances on the same suite in one process share their state: each sees the others'
    /// writes at once and hears about them as ``AnyDefaultsCore/DefaultsChangeEvent/Origin-swift.enum/external``
    /// events.
    ///
    /// - Throws: ``AnyDefaultsCore/DefaultsError/Code-swift.struct/invalidConfiguration`` for a
    ///   suite name Foundation cannot use as a suite;
    ///   ``AnyDefaultsCore/DefaultsError/Code-swift.struct/corrupted`` (with the file's path) when
    ///   the suite's file is not a valid property list, unless ``Options-swift.struct/recoverCorruptedFile``
    ///   is set; ``AnyDefaultsCore/DefaultsError/Code-swift.struct/permissionDenied`` or
    ///   ``AnyDefaultsCore/DefaultsError/Code-swift.struct/ioFailure`` when the file cannot be read.
    public init(suiteName: String? = nil, options: Options = Options()) throws(DefaultsError) {
        if let suiteName { try Self.validate(suiteName: suiteName) }
        try Self.checkLocation(forSuite: suiteName)
        self.suiteName = suiteName
        self.options = options
        let store = Self.store(forSuite: suiteName)
        self.store = store
        instanceID = store.listeners.register(broadcaster)
        watching = store.watch()
        // Read the suite now, so that a damaged file is reported here rather than on first use.
        try store.refresh(options: options)
    }

    deinit {
        store.listeners.unregister(instanceID)
    }

    /// The suite's property-list file, where the provider reads and writes it (Linux); `nil` on
    /// Apple platforms, where `cfprefsd` owns the file.
    public var fileURL: URL? { store.fileURL }

    /// What the provider promises: persistent and safe for several processes everywhere; where it
    /// writes the suite file itself (not on Apple platforms), also atomic batches, across a crash
    /// too, and events for changes other processes make (``AnyDefaultsCore/DefaultsCapabilities/externalChanges``,
    /// when the file can be watched).
    public var capabilities: DefaultsCapabilities {
        watching ? Self.supportedCapabilities : Self.supportedCapabilities.subtracting(.externalChanges)
    }

    /// The ``capabilities`` of a provider on this platform whose suite file can be watched.
    public static var supportedCapabilities: DefaultsCapabilities {
        #if canImport(Darwin)
        [.persistent, .multiProcess]
        #else
        [.persistent, .atomicBatch, .multiProcess, .externalChanges]
        #endif
    }

    public func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        try store.value(forKey: DefaultsValidation.canonicalKey(key, backend: Self.backend), options: options)
    }

    /// Removes `key` in one locked write of the suite and tells whether it was there.
    @discardableResult
    public func removeValueIfPresent(forKey key: String) throws(DefaultsError) -> Bool {
        let key = try DefaultsValidation.canonicalKey(key, backend: Self.backend)
        return try commit([.remove(key)]).contains { $0.key == key }
    }

    public func keys() throws(DefaultsError) -> [String] {
        Array(try store.allValues(options: options).keys)
    }

    public func allValues() throws(DefaultsError) -> [String: DefaultsValue] {
        try store.allValues(options: options)
    }

    public func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: Self.backend)
        guard !changes.isEmpty else { return }
        try commit(changes)
    }

    /// Removes every key of the suite, also entries written by other software that
    /// `DefaultsValue` cannot represent.
    public func removeAll() throws(DefaultsError) {
        try commit(nil)
    }

    /// Applies validated `changes` (or removes everything, for `nil`) in one locked write of the
    /// suite; returns the events of the changes made (the keys whose value changed).
    @discardableResult
    private func commit(_ changes: [DefaultsChange]?) throws(DefaultsError) -> [DefaultsChangeEvent] {
        try store.update(from: instanceID, options: options) { _ in changes }
    }

    /// Compares and applies with one replacement of the suite file under the lock every writer
    /// using this library holds (on Linux: atomic against all of them). On Apple platforms
    /// CFPreferences has no transactions: it is atomic against this process's writers only.
    public func apply(_ changes: [DefaultsChange], ifUnchanged expected: [String: DefaultsValue?]) throws(DefaultsError) -> Bool {
        try ConditionalWrite.apply(changes, ifUnchanged: expected, backend: Self.backend) { decide throws(DefaultsError) in
            try store.update(from: instanceID, options: options, decide)
        }
    }

    /// Removes the unchanged keys with one replacement of the suite file under the lock every
    /// writer using this library holds (on Linux: atomic against all of them). On Apple platforms
    /// CFPreferences has no transactions: it is atomic against this process's writers only.
    public func removeValues(ifUnchanged expected: [String: DefaultsValue]) throws(DefaultsError) -> [String] {
        try ConditionalWrite.removeValues(ifUnchanged: expected, backend: Self.backend) { decide throws(DefaultsError) in
            try store.update(from: instanceID, options: options, decide)
        }
    }

    /// The suite's file (Linux), or the suite's name where `cfprefsd` owns the file.
    public var storeIdentity: DefaultsStoreIdentity? { Self.storeIdentity(forSuite: suiteName) }

    /// The identity of the suite `suiteName` (the standard suite for `nil`), without opening it.
    public static func storeIdentity(forSuite suiteName: String?) -> DefaultsStoreIdentity {
        #if canImport(Darwin)
        .named(suiteName ?? (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName), backend: backend)
        #else
        .files(PreferencesLocation.file(forSuite: suiteName).path)
        #endif
    }

    public func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        broadcaster.observe(handler)
    }

    /// Reads the suite again now, rather than within ``Options-swift.struct/refreshInterval``,
    /// and reports changes made by other processes, or by plain `UserDefaults` code that
    /// synchronized, as ``AnyDefaultsCore/DefaultsChangeEvent/Origin-swift.enum/external`` events.
    /// Does nothing on Apple platforms, where reads are always current.
    public func refresh() throws(DefaultsError) {
        try store.refresh(options: options)
    }

    /// The file in which Foundation keeps `suiteName` (or the standard suite, for `nil`) on this
    /// platform, or `nil` on Apple platforms, where `cfprefsd` owns the files.
    public static func propertyListURL(forSuite suiteName: String?) throws(DefaultsError) -> URL? {
        if let suiteName { try validate(suiteName: suiteName) }
        #if canImport(Darwin)
        return nil
        #else
        return URL(fileURLWithPath: PreferencesLocation.file(forSuite: suiteName).path)
        #endif
    }

    /// Deletes the suite `suiteName` with everything in it, as
    /// `UserDefaults.removePersistentDomain(forName:)` does. Open providers on it see it empty
    /// from their next refresh.
    ///
    /// ```swift
    /// try UserDefaultsProvider.removeSuite(named: "com.example.tests.\(id)")
    /// ```
    public static func removeSuite(named suiteName: String, lockTimeout: Duration = .seconds(10)) throws(DefaultsError) {
        try validate(suiteName: suiteName)
        #if canImport(Darwin)
        PreferencesDomainStore.removeSuite(suiteName)
        #else
        try PropertyListFileStore.removeSuite(
            PreferencesLocation.file(forSuite: suiteName), suiteName: suiteName, lockTimeout: lockTimeout)
        #endif
    }

    // MARK: Internals

    /// The suites open in this process: every instance on one suite shares one store, by the
    /// suite's name (Apple) or its file's path (elsewhere).
    private static let openStores = SharedInstances<String, Store>()

    private static func store(forSuite suiteName: String?) -> Store {
        #if canImport(Darwin)
        return openStores.object(for: suiteName ?? "") { PreferencesDomainStore(suiteName: suiteName) }.object
        #else
        let file = PreferencesLocation.file(forSuite: suiteName)
        return openStores.object(for: file.path) { PropertyListFileStore(file: file, suiteName: suiteName) }.object
        #endif
    }

    /// Rejects names Foundation does not treat as a suite of its own, or cannot use as a file name.
    static func validate(suiteName: String) throws(DefaultsError) {
        func reject(_ reason: String) -> DefaultsError {
            DefaultsError(
                .invalidConfiguration,
                "The suite name \(suiteName.debugDescription) \(reason). Give a name such as \"com.example.app\", or none for the standard suite (`userdefaults:` without a suite in a store string; a nil suite name in code).",
                backend: backend)
        }
        if suiteName.isEmpty { throw reject("is empty") }
        let reserved = [
            UserDefaults.globalDomain, UserDefaults.argumentDomain, UserDefaults.registrationDomain,
            ".GlobalPreferences", "kCFPreferencesAnyApplication", "kCFPreferencesCurrentApplication",
        ]
        if reserved.contains(suiteName) { throw reject("names one of Foundation's own domains") }
        if suiteName == "." || suiteName == ".." || suiteName.contains("/") || suiteName.contains("\0") {
            throw reject("cannot be a file name (it is \".\" or \"..\", or holds \"/\" or a NUL)")
        }
        if suiteName.utf8.count > 249 {
            throw reject("is longer than 249 bytes of UTF-8, which leaves no room for \".plist\" in a file name")
        }
    }

    /// Refuses a suite whose file could never be written: a name too long for the temporary and
    /// set-aside files written beside it, or a preferences directory taken from an environment
    /// variable that is not valid UTF-8 (it would name another directory). Checked on opening, not
    /// on every write. Nothing to check where `cfprefsd` owns the files.
    private static func checkLocation(forSuite suiteName: String?) throws(DefaultsError) {
        #if !canImport(Darwin)
        if let variable = PreferencesLocation.undecodableVariable {
            throw DefaultsError(
                .invalidConfiguration,
                "The preferences directory comes from $\(variable), which is not valid UTF-8; it would be read as another directory.",
                backend: backend)
        }
        let file = PreferencesLocation.file(forSuite: suiteName)
        do {
            try FileReplacement.checkNameLength(of: file.path, longestSuffix: PropertyListFile.longestSidecarSuffix)
        } catch {
            throw DefaultsError(
                .invalidConfiguration,
                "The suite name is too long for the files written beside its property list; choose a shorter one.",
                backend: backend, path: file.path, cause: error)
        }
        #endif
    }
}
