/// The one error type of AnyDefaults: what went wrong, in which backend, for which key and file.
///
/// Every provider, built-in or custom, throws `DefaultsError`. Match on ``code`` to react:
///
/// ```swift
/// do {
///     try store.setValue(.string("x"), forKey: "")
/// } catch let error as DefaultsError where error.code == .invalidKey {
///     print(error.message)
/// }
/// ```
///
/// The description names the backend, the key, the path and the cause; it never contains a stored
/// value, because values may be secrets.
public struct DefaultsError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in later versions: match the ones you
    /// handle and keep a default case.
    public var code: Code
    /// A sentence for people: what failed and, where it helps, what is accepted.
    public var message: String
    /// The backend that failed, for example `"SQLite"` or `"JSONFile"`.
    public var backend: String
    /// The key involved, where there is one.
    public var key: String?
    /// The file or directory involved, where there is one.
    public var path: String?
    /// The lower-level error that caused this one, if any.
    public var cause: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        backend: String,
        key: String? = nil,
        path: String? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.backend = backend
        self.key = key
        self.path = path
        self.cause = cause
    }

    public var description: String {
        var text = "\(backend): \(code): \(message)"
        if let key { text += " (key: \(key.debugDescription))" }
        if let path { text += " (path: \(path))" }
        if let cause { text += " (cause: \(cause))" }
        return text
    }
}

extension DefaultsError {
    /// A kind of failure. The set is open: compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) { self.name = name }

        public var description: String { name }

        /// The key is not acceptable (empty, or beyond what the backend can store).
        public static let invalidKey = Code("invalidKey")
        /// The value cannot be stored (too deep, too large, or of a type the backend rejects).
        public static let invalidValue = Code("invalidValue")
        /// Stored data could not be read: the file or record is damaged or not of this format.
        public static let corrupted = Code("corrupted")
        /// The store was written by a newer version of its format than this library knows.
        public static let incompatibleFormat = Code("incompatibleFormat")
        /// A file or directory that must exist does not.
        public static let notFound = Code("notFound")
        /// The operating system denied access to a file or directory.
        public static let permissionDenied = Code("permissionDenied")
        /// The store is full and could not grow.
        public static let storageFull = Code("storageFull")
        /// Another writer held the store for longer than the configured wait.
        public static let busy = Code("busy")
        /// Any other input/output failure.
        public static let ioFailure = Code("ioFailure")
        /// The store was closed.
        public static let closed = Code("closed")
        /// The store's server cannot be reached now (the connection is down and being restored);
        /// nothing was written.
        public static let unavailable = Code("unavailable")
        /// A configuration string, file or option is not valid.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A stored value does not have the type that was asked for.
        public static let typeMismatch = Code("typeMismatch")
        /// A value could not be encoded into a `DefaultsValue`.
        public static let encodingFailed = Code("encodingFailed")
        /// A `DefaultsValue` could not be decoded into the requested type.
        public static let decodingFailed = Code("decodingFailed")
        /// The operation is not supported by this backend.
        public static let unsupported = Code("unsupported")
        /// A failure inside the backend that fits no other code.
        public static let internalError = Code("internalError")
    }
}
