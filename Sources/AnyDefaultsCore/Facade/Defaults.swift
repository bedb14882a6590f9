import Logging
import Synchronization

/// A settings store with the shape of `UserDefaults`, over any ``DefaultsProvider``.
///
/// ```swift
/// let defaults = Defaults(MemoryProvider())          // or any backend
///
/// defaults.set(true, forKey: "onboarded")
/// let onboarded = defaults.bool(forKey: "onboarded")
///
/// extension DefaultsKeys {
///     static let volume = DefaultsKey<Double>("volume", default: 0.5)
/// }
/// defaults[.volume] = 0.8                               // typed keys
///
/// defaults.setCodable(layout, forKey: "layout")        // any Codable value
/// let ui = defaults.scoped("ui.")                       // keys under "ui."
/// ```
///
/// ## Errors
/// The methods here never throw. A failure (the backend cannot be read, a stored value does not
/// have the requested type) is sent to the ``ErrorHandler`` given at creation — by default a
/// swift-log `Logger` labelled `"AnyDefaults"` — and the read returns its fallback: the key's
/// default, or what `UserDefaults` returns (`0`, `false`, `nil`). A stored value that fails to
/// decode is left in place unless ``DecodingFailurePolicy/removeValue`` says otherwise. For the
/// errors themselves, use the same operations through ``throwing``:
///
/// ```swift
/// let volume = try defaults.throwing.value(for: .volume)
/// ```
///
/// ## Registered defaults
/// ``register(defaults:)`` values are read when the store holds nothing for a key, before a typed
/// key's own default, as with `UserDefaults`. They are kept in memory, never stored.
///
/// ## Observation, changes, snapshots, transactions
/// Typed reads (`defaults[.volume]`) take part in Swift's Observation one key at a time;
/// ``observe(_:)``, ``changes()`` and ``values(of:)`` report changes from anywhere;
/// ``snapshot()`` copies the store; ``write(_:)`` applies several changes as one batch. See
/// ``Default`` and ``DefaultsModel`` for properties, and Docs/Observation.md.
///
/// ## Threads
/// `Defaults` is `Sendable`: use one instance from any thread or task.
public final class Defaults: Sendable {
    /// Receives the errors of the non-throwing methods.
    public typealias ErrorHandler = @Sendable (DefaultsError) -> Void

    /// What a non-throwing read does with a stored value that cannot be read as the requested
    /// type (``DefaultsError/Code-swift.struct/typeMismatch`` or
    /// ``DefaultsError/Code-swift.struct/decodingFailed``). Either way the error is reported
    /// and the default returned.
    public enum DecodingFailurePolicy: Sendable, Hashable {
        /// Leave the stored value alone. The default: another part of the program, or a newer
        /// version of it, may read that value as another type.
        case keepValue
        /// Remove the stored value, so that later reads give the default without an error.
        case removeValue
    }

    /// The provider this instance reads and writes: the one it was created with, behind a
    /// ``CachingProvider`` unless that was turned off.
    public let provider: any DefaultsProvider
    /// The prefix put in front of every key, from ``scoped(_:)``; empty for an unscoped instance.
    public let prefix: String

    @usableFromInline let shared: Shared
    /// `shared.tracker`, held here too: a typed read reaches it in one load, which the compiler
    /// then passes on without retaining it (through `shared` it retains and releases it on every
    /// read, about 40 instructions).
    @usableFromInline let tracker: ObservationTracker
    /// Whether ``prefix`` is not empty: a stored flag, tested in one instruction on every typed
    /// read, where `prefix.isEmpty` decodes the string's count.
    @usableFromInline let isScoped: Bool
    /// The cache's lock-free path for typed reads, held by `shared`: unmanaged, so that a read
    /// counts no references.
    let readPath: Unmanaged<CacheReadPath>?

    /// How many change observers (streams, publishers, `observe` handlers) this instance and its
    /// scoped views have registered now; they share one observation of the provider. For tests
    /// that check an observer ends with its stream or subscription.
    package var changeObserverCount: Int { shared.feed.observerCount }

    /// State shared by an instance and the scoped instances made from it.
    @usableFromInline final class Shared: Sendable {
        let registered = Mutex<[String: DefaultsValue]>([:])
        @usableFromInline let decoded = DecodedValueCache()
        let errorHandler: ErrorHandler
        let decodingFailurePolicy: DecodingFailurePolicy
        /// The cache in front of the provider, if there is one.
        let cache: (any CacheControl)?
        /// The cache's lock-free path for typed reads.
        let readPath: CacheReadPath?
        /// Observation of reads and changes, fed by the provider's events (see `ObservationTracker`).
        @usableFromInline let tracker = ObservationTracker()
        /// Whether reads by name (`integer(forKey:)`...) are tracked too, not only typed reads.
        @usableFromInline let tracksReadsByName: Bool
        /// The provider's events, numbered, for the observers of this store and its scopes.
        let feed = ChangeFeed()
        private let subscription: DefaultsObservation

        init(
            provider: any DefaultsProvider, errorHandler: @escaping ErrorHandler,
            decodingFailurePolicy: DecodingFailurePolicy, cache: (any CacheControl)?, tracksReadsByName: Bool
        ) {
            self.errorHandler = errorHandler
            self.decodingFailurePolicy = decodingFailurePolicy
            self.cache = cache
            readPath = cache?.readPath
            self.tracksReadsByName = tracksReadsByName
            // Over a cache, its events come straight from it, with their key's key path for
            // Observation when the cache holds it (one hop, no lookup; see `CacheDirectObserver`).
            let sink = DefaultsEventSink(tracker: tracker, feed: feed)
            if let cache {
                subscription = cache.observeDirectly(sink)
            } else {
                subscription = provider.observe { event in sink.receive(event, slot: nil) }
            }
        }
    }

    /// Creates a store over `provider`.
    ///
    /// ```swift
    /// let defaults = Defaults(try SQLiteProvider(path: path))
    /// let uncached = Defaults(MemoryProvider(), cached: false)
    /// ```
    ///
    /// - Parameters:
    ///   - cached: whether to put a ``CachingProvider`` in front of `provider` (unless it is one
    ///     already), so that repeated reads cost a lock and a lookup. On by default. Write through
    ///     this instance (or the cache) rather than to `provider` directly: the cache learns of
    ///     direct writes only through the provider's change events.
    ///   - errorHandler: receives the errors of the non-throwing methods; by default they are
    ///     logged with swift-log (see ``logErrors``).
    ///   - decodingFailurePolicy: what to do with a stored value that cannot be read as the
    ///     requested type; by default it is kept.
    ///   - tracksReadsByName: whether reads by name (`integer(forKey:)`, `string(forKey:)`...)
    ///     take part in Observation like typed reads do (see Docs/Observation.md). Off by default:
    ///     it costs a dictionary lookup per read.
    public convenience init(
        _ provider: some DefaultsProvider,
        cached: Bool = true,
        errorHandler: @escaping ErrorHandler = Defaults.logErrors,
        decodingFailurePolicy: DecodingFailurePolicy = .keepValue,
        tracksReadsByName: Bool = false
    ) {
        let store: any DefaultsProvider = if cached, !(provider is any CacheControl) { provider.cached() } else { provider }
        self.init(
            provider: store, prefix: "",
            shared: Shared(
                provider: store, errorHandler: errorHandler, decodingFailurePolicy: decodingFailurePolicy,
                cache: store as? any CacheControl, tracksReadsByName: tracksReadsByName))
    }

    init(provider: any DefaultsProvider, prefix: String, shared: Shared) {
        self.provider = provider
        self.prefix = prefix
        self.shared = shared
        tracker = shared.tracker
        isScoped = !prefix.isEmpty
        readPath = shared.readPath.map { Unmanaged.passUnretained($0) }
    }

    /// A view of this store whose keys all start with `prefix`: `scoped("ui.")` reads and
    /// writes `"theme"` as `"ui.theme"`, lists only the keys under `"ui."` (without the prefix)
    /// and removes only those, with prefix queries of the store's index
    /// (``DefaultsProvider/keys(withPrefix:)``). Scopes nest, and share registered defaults and the
    /// error handler.
    ///
    /// A key given to the view is validated as the store validates keys, for the part the caller
    /// wrote: the empty key is ``DefaultsError/Code-swift.struct/invalidKey`` (it never reads or
    /// writes the prefix itself), and so is a key that would leave the scope once joined to the
    /// prefix (see ``DefaultsValidation/scopedKey(_:prefix:backend:)``).
    ///
    /// ```swift
    /// let ui = defaults.scoped("ui.")
    /// ui.set("dark", forKey: "theme")              // stored as "ui.theme"
    /// ui.removeAll()                               // removes "ui.*" only
    /// ```
    public func scoped(_ prefix: String) -> Defaults {
        Defaults(provider: provider, prefix: self.prefix + prefix, shared: shared)
    }

    /// The same operations, throwing their errors instead of reporting them.
    public var throwing: ThrowingDefaults { ThrowingDefaults(self) }

    /// The default error handler: logs each error with a swift-log `Logger` labelled
    /// `"AnyDefaults"`, at `error` level, with the code, backend and key as metadata. Stored
    /// values never appear in the message.
    public static let logErrors: ErrorHandler = { error in
        var metadata: Logger.Metadata = ["code": "\(error.code)", "backend": "\(error.backend)"]
        if let key = error.key { metadata["key"] = "\(key)" }
        logger.error("\(error.description)", metadata: metadata)
    }

    private static let logger = Logger(label: "AnyDefaults")

    // MARK: Internals shared by the throwing and the non-throwing API
    //
    // The read path of typed keys is inlinable, so that it is specialized for the value type in
    // the caller's module: a typed read of a scalar then costs little more than the provider's
    // own read (see Benchmarks/Benchmarks/FacadeBenchmarks).

    /// The key as stored: the scope's prefix and `name`.
    ///
    /// In a scoped store, a `name` the scope cannot hold (empty, or starting with a mark that
    /// would join the prefix, see ``DefaultsValidation/scopedKey(_:prefix:backend:)``) gives the
    /// empty key, which every provider rejects with ``DefaultsError/Code-swift.struct/invalidKey``
    /// before reading or writing anything: never the prefix itself, nor a key outside the scope.
    /// ``checkedFullKey(_:)`` throws the precise error instead.
    @inlinable
    func fullKey(_ name: String) -> String {
        isScoped ? scopedKey(name) : name
    }

    /// ``fullKey(_:)`` for a scoped store; out of line, so the inlined unscoped path stays small.
    @usableFromInline @inline(never)
    func scopedKey(_ name: String) -> String {
        (try? checkedFullKey(name)) ?? ""
    }

    /// The key as stored, or the error the store gives for the part the caller wrote.
    func checkedFullKey(_ name: String) throws(DefaultsError) -> String {
        isScoped ? try DefaultsValidation.scopedKey(name, prefix: prefix, backend: "Defaults") : name
    }

    /// Sends `error` to the store's error handler (by default, the log), as the non-throwing
    /// methods do with theirs: for code built on ``Defaults`` that recovers from an error and
    /// must still say so, such as a typed read that falls back to its default.
    ///
    /// ```swift
    /// defaults.report(DefaultsError(.decodingFailed, "The layout cannot be read.", backend: "MyApp"))
    /// ```
    public func report(_ error: DefaultsError) {
        shared.errorHandler(error)
    }

    /// Reports a failed read and returns `fallback`, removing the stored value first if the
    /// policy asks for that and the value could not be decoded.
    @usableFromInline
    func recover<T>(_ error: DefaultsError, fullKey: String, fallback: T) -> T {
        report(error)
        if shared.decodingFailurePolicy == .removeValue,
           error.code == .typeMismatch || error.code == .decodingFailed {
            do {
                try provider.removeValue(forKey: fullKey)
            } catch {
                report(error)
            }
            shared.decoded.remove(forKey: fullKey)
        }
        return fallback
    }

    /// The stored value for a full key, or else its registered default.
    @inlinable
    func lookup(_ fullKey: String) throws(DefaultsError) -> DefaultsValue? {
        if let stored = try provider.value(forKey: fullKey) { return stored }
        return registeredValue(fullKey)
    }

    /// ``lookup(_:)`` for a typed key.
    @inlinable
    func lookup(_ fullKey: String, key: DefaultsKeys) throws(DefaultsError) -> DefaultsValue? {
        if let stored = try storedValue(fullKey, key: key) { return stored }
        return registeredValue(fullKey)
    }

    /// The stored value of a typed key: from the answer the cache published for it, without a
    /// lock, where there is one (see ``CacheReadPath``), else from the provider.
    @usableFromInline
    func storedValue(_ fullKey: String, key: DefaultsKeys) throws(DefaultsError) -> DefaultsValue? {
        guard !isScoped, let path = readPath else { return try provider.value(forKey: fullKey) }
        if let slot = key.readSlot(in: path._withUnsafeGuaranteedRef { $0.id }) {
            if let answer = path._withUnsafeGuaranteedRef({ $0.answer(slot) }) { return answer }
            return try throughCache(slot.takeUnretainedValue(), fullKey: fullKey)
        }
        return try throughCache(nil, fullKey: fullKey, remembering: key)
    }

    /// A typed read through the cache's lock, which publishes what it finds in `slot` (made and
    /// remembered by `key` when `nil`).
    @inline(never)
    private func throughCache(
        _ slot: CacheReadSlot?, fullKey: String, remembering key: DefaultsKeys? = nil
    ) throws(DefaultsError) -> DefaultsValue? {
        guard let cache = shared.cache else { return try provider.value(forKey: fullKey) }
        if let slot { return try cache.value(through: slot) }
        guard let key, let slot = newSlot(of: key, fullKey: fullKey, in: cache) else {
            return try provider.value(forKey: fullKey)
        }
        return try cache.value(through: slot)
    }

    /// The cache's slot for the typed key `key` of an unscoped store, made and remembered by the
    /// key; `nil` if the key remembers as many caches as it may.
    private func newSlot(of key: DefaultsKeys, fullKey: String, in cache: any CacheControl) -> CacheReadSlot? {
        let slot = cache.readSlot(forKey: fullKey, observationKey: key.observedKeyPath)
        return key.remember(slot) ? slot : nil
    }

    /// Writes `stored` under the typed key `key` through the key's slot in the cache, which finds
    /// the key's record without hashing it and makes its events carry the key's key path. Returns
    /// `false`, having written nothing, for a scoped or uncached store, or a key that remembers as
    /// many caches as it may.
    func writeThroughSlot(_ stored: DefaultsValue, key: DefaultsKeys, fullKey: String) throws(DefaultsError) -> Bool {
        // A read path means a cache.
        guard !isScoped, let path = readPath else { return false }
        if let slot = key.readSlot(in: path._withUnsafeGuaranteedRef { $0.id }) {
            // The key holds the slot, and `shared` the cache, while they live: no reference
            // counted for the write (optional chaining borrows the cache).
            try slot._withUnsafeGuaranteedRef { slot in
                Result { () throws(DefaultsError) in try shared.cache?.setValue(stored, through: slot) }
            }.get()
            return true
        }
        guard let cache = shared.cache, let slot = newSlot(of: key, fullKey: fullKey, in: cache) else { return false }
        try cache.setValue(stored, through: slot)
        return true
    }

    @usableFromInline
    func registeredValue(_ fullKey: String) -> DefaultsValue? {
        shared.registered.withLock { $0[fullKey] }
    }

    /// Reads `T` through its ``DefaultsSerializable`` conformance; `nil` if nothing is stored
    /// or registered.
    @inlinable
    func read<T: DefaultsSerializable>(_ type: T.Type, fullKey: String) throws(DefaultsError) -> T? {
        try decode(T.self, fullKey: fullKey, stored: lookup(fullKey))
    }

    /// ``read(_:fullKey:)`` for a typed key.
    @inlinable
    func read<T: DefaultsSerializable>(_ type: T.Type, fullKey: String, key: DefaultsKeys) throws(DefaultsError) -> T? {
        try decode(T.self, fullKey: fullKey, stored: lookup(fullKey, key: key))
    }

    /// `T` from what ``lookup(_:)`` found.
    @inlinable
    func decode<T: DefaultsSerializable>(
        _ type: T.Type, fullKey: String, stored: consuming DefaultsValue?
    ) throws(DefaultsError) -> T? {
        // Unwrapped by consuming, and handed over, not copied: a copy of a stored string costs a
        // retain and a release (atomic operations, about a third of a cached typed read).
        guard let value = consume stored else {
            if T.cachesDecodedValue { forgetDecoded(fullKey) }
            return nil
        }
        if T.cachesDecodedValue { return try readCaching(T.self, fullKey: fullKey, stored: value) }
        do {
            return try T(defaultsValue: consume value)
        } catch {
            throw error.located(at: fullKey)
        }
    }

    @inlinable
    func readCaching<T: DefaultsSerializable>(_ type: T.Type, fullKey: String, stored: DefaultsValue) throws(DefaultsError) -> T {
        try decodeCaching(T.self, method: .bridge, fullKey: fullKey, stored: stored) { value throws(DefaultsError) in
            try T(defaultsValue: value)
        }
    }

    @usableFromInline
    func forgetDecoded(_ fullKey: String) {
        shared.decoded.remove(forKey: fullKey)
    }

    /// Reads `T` as `Codable`; `nil` if nothing is stored or registered.
    func readCodable<T: Decodable & Sendable>(
        _ type: T.Type, fullKey: String, strategy: DefaultsCodingStrategy
    ) throws(DefaultsError) -> T? {
        guard let stored = try lookup(fullKey) else {
            shared.decoded.remove(forKey: fullKey)
            return nil
        }
        let decoder = DefaultsDecoder(strategy: strategy)
        return try decodeCaching(T.self, method: .codable(strategy), fullKey: fullKey, stored: stored) { value throws(DefaultsError) in
            try decoder.decode(T.self, from: value)
        }
    }

    /// Decodes `stored`, or returns the value decoded from an equal stored value before.
    @inlinable
    func decodeCaching<T: Sendable>(
        _ type: T.Type, method: DecodedValueCache.Method, fullKey: String, stored: DefaultsValue,
        _ decode: (DefaultsValue) throws(DefaultsError) -> T
    ) throws(DefaultsError) -> T {
        if let cached = shared.decoded.value(T.self, method: method, forKey: fullKey, source: stored) {
            return cached
        }
        do {
            let value = try decode(stored)
            shared.decoded.store(value, method: method, forKey: fullKey, source: stored)
            return value
        } catch {
            throw error.located(at: fullKey)
        }
    }

    /// Stores `value` (a `nil` removes the key).
    /// `mayBeAbsent: false` says that `T` is not an optional (see `DefaultsKey.valueIsOptional`).
    func write<T: DefaultsSerializable>(_ value: T, fullKey: String, mayBeAbsent: Bool = true) throws(DefaultsError) {
        guard let stored = try encodedForWrite(value, fullKey: fullKey, mayBeAbsent: mayBeAbsent) else {
            return try remove(fullKey: fullKey)
        }
        try store(stored, fullKey: fullKey, cachesDecodedValue: T.cachesDecodedValue)
    }

    /// ``write(_:fullKey:mayBeAbsent:)`` of the typed key `key`: through its slot in the cache
    /// where there is one (see ``writeThroughSlot(_:key:fullKey:)``).
    func write<T: DefaultsSerializable>(_ value: T, of key: DefaultsKeys, fullKey: String, mayBeAbsent: Bool) throws(DefaultsError) {
        guard let stored = try encodedForWrite(value, fullKey: fullKey, mayBeAbsent: mayBeAbsent) else {
            return try remove(fullKey: fullKey)
        }
        guard try writeThroughSlot(stored, key: key, fullKey: fullKey) else {
            return try store(stored, fullKey: fullKey, cachesDecodedValue: T.cachesDecodedValue)
        }
        if T.cachesDecodedValue { shared.decoded.remove(forKey: fullKey) }
    }

    /// What writing `value` stores: its encoding, or `nil` for an absent optional (a removal).
    func encodedForWrite<T: DefaultsSerializable>(
        _ value: T, fullKey: String, mayBeAbsent: Bool = true
    ) throws(DefaultsError) -> DefaultsValue? {
        if mayBeAbsent, isAbsent(value) { return nil }
        do {
            return try value.defaultsValue
        } catch {
            throw error.located(at: fullKey)
        }
    }

    /// Stores an already encoded value.
    func store(_ stored: DefaultsValue, fullKey: String, cachesDecodedValue: Bool = true) throws(DefaultsError) {
        try provider.setValue(stored, forKey: fullKey)
        if cachesDecodedValue { shared.decoded.remove(forKey: fullKey) }
    }

    func remove(fullKey: String) throws(DefaultsError) {
        try provider.removeValue(forKey: fullKey)
        shared.decoded.remove(forKey: fullKey)
    }
}

extension DefaultsError {
    /// This error, naming `key` as its key and, for errors of the coder layer, at the start of
    /// the path inside the value.
    @usableFromInline
    func located(at key: String) -> DefaultsError {
        var error = [DefaultsEncoder.backend, DefaultsDecoder.backend, bridgeBackend].contains(backend) ? inside(key) : self
        error.key = error.key ?? key
        return error
    }
}
