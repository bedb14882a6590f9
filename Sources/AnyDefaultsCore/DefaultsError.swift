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
/// value, because values may be secrets. It is always one line: control characters in a key, a
/// path or a cause are escaped (see ``printable(_:)``), so that a crafted name cannot make one
/// message read as two.
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
        (self.code, self.message, self.backend) = (code, message, backend)
        (self.key, self.path, self.cause) = (key, path, cause)
    }

    public var description: String {
        var text = "\(backend): \(code): \(message)"
        if let key { text += " (key: \(key.debugDescription))" }
        if let path { text += " (path: \(path))" }
        if let cause { text += " (cause: \(cause))" }
        return Self.printable(text)
    }

    /// `text` with every character that would not print as itself on one line written as an
    /// escape: controls (`\n` as `\u{0A}`, ESC, DEL, the C1 controls), the line and paragraph
    /// separators, and the bidirectional overrides and isolates that reorder what follows them.
    /// Everything else, backslashes included, is left as it is.
    ///
    /// ```swift
    /// DefaultsError.printable("a\nb")   // "a\\u{0A}b": one line
    /// ```
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if isUnprintable(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 2) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `scalar` is one that ``printable(_:)`` escapes.
    static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0, DEL, C1
        case 0x2028, 0x2029: true  // line and paragraph separators
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional controls
        default: false
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
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
