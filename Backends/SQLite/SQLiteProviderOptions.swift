import AnyDefaultsCore

extension SQLiteProvider {
    /// How a store is opened: the same shape as every backend's `Options`.
    ///
    /// ```swift
    /// let store = try SQLiteProvider(path: path, options: SQLiteProvider.Options(durability: .full))
    /// ```
    public struct Options: Sendable, Hashable {
        /// How far committed writes are protected; ``SQLiteProvider/Durability/normal`` by default.
        public var durability: Durability
        /// How long a write waits for another connection's transaction before failing with
        /// ``DefaultsError/Code-swift.struct/busy``; taken as between zero and one year. 5 seconds by default.
        /// On Linux a holder in another process that works (killed and exiting, or committing
        /// again and again) is waited for past it, at most 30 s more; a stopped one is not.
        public var lockTimeout: Duration

        public init(durability: Durability = .normal, lockTimeout: Duration = .seconds(5)) {
            self.durability = durability
            self.lockTimeout = lockTimeout
        }
    }

    /// Opens the store at `path` with `options`; see ``init(path:durability:busyTimeout:)``.
    public convenience init(path: String, options: Options) throws(DefaultsError) {
        try self.init(path: path, durability: options.durability, busyTimeout: options.lockTimeout)
    }

    /// The options this provider was opened with (the lock timeout as bounded).
    public var options: Options { Options(durability: durability, lockTimeout: busyTimeout) }
}
