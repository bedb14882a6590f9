extension DefaultsError {
    /// Whose the failure is, and so what a caller can do about it: the classification a server
    /// maps to a response without a table of codes of its own.
    ///
    /// ```swift
    /// switch error.kind {
    /// case .callerFault: return .badRequest            // 400: the request must change
    /// case .transient: return .serviceUnavailable      // 503 with Retry-After: try again
    /// case .storeState: return .insufficientStorage    // 507 or 500: an operator must act
    /// case .internalFailure: return .internalServerError
    /// }
    /// ```
    ///
    /// | kind | codes | retry? |
    /// |---|---|---|
    /// | ``callerFault`` | `invalidKey`, `invalidValue`, `typeMismatch`, `encodingFailed`, `decodingFailed`, `invalidConfiguration`, `unsupported` | no: the same call fails again |
    /// | ``storeState`` | `storageFull`, `permissionDenied` (a read-only store), `corrupted`, `incompatibleFormat`, `notFound`, `ioFailure` | not until someone frees space, fixes permissions or repairs the store |
    /// | ``transient`` | `busy`, `closed`, `unavailable` | yes (``isRetryable``): later, or on another instance |
    /// | ``internalFailure`` | `internalError`, and any code this version does not know | no; report it |
    ///
    /// A rejected call never wrote anything, whatever its kind; a batch is all or nothing.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// The caller asked for something the store cannot do: an invalid key or value, a stored
        /// value read as the wrong type, a bad configuration. Retrying the same call fails again.
        case callerFault
        /// The store is in a state that refuses the call: full, read-only, damaged, of a newer
        /// format, missing, or failing its input/output. It lasts until someone acts.
        case storeState
        /// A passing condition: another writer held the store past the wait, the store or its
        /// connection was closed. The same call may succeed later, or on another instance.
        case transient
        /// A failure inside the library or the backend that fits nothing above.
        case internalFailure

        public var description: String {
            switch self {
            case .callerFault: "callerFault"
            case .storeState: "storeState"
            case .transient: "transient"
            case .internalFailure: "internalFailure"
            }
        }
    }

    /// Whose this failure is (see ``Kind``).
    public var kind: Kind {
        Self.kind(of: code)
    }

    /// Whether the same call may succeed if made again later: the error is ``Kind/transient``
    /// (`busy`, `closed`, `unavailable`). Nothing was written by the failed call.
    ///
    /// ```swift
    /// for attempt in 1...3 {
    ///     do { return try store.apply(changes) }
    ///     catch where error.isRetryable && attempt < 3 { try await Task.sleep(for: .milliseconds(50 * attempt)) }
    /// }
    /// ```
    public var isRetryable: Bool {
        kind == .transient
    }

    /// The kind of every code; new codes are added here when they are added to ``Code``.
    static func kind(of code: Code) -> Kind {
        switch code {
        case .invalidKey, .invalidValue, .typeMismatch, .encodingFailed, .decodingFailed, .invalidConfiguration, .unsupported:
            .callerFault
        case .storageFull, .permissionDenied, .corrupted, .incompatibleFormat, .notFound, .ioFailure:
            .storeState
        case .busy, .closed, .unavailable:
            .transient
        default:
            .internalFailure
        }
    }
}
