extension UserDefaultsProvider {
    /// How a ``UserDefaultsProvider`` treats a damaged suite file, how fresh its reads are, and how
    /// long it waits for other writers.
    ///
    /// ```swift
    /// var options = UserDefaultsProvider.Options()
    /// options.recoverCorruptedFile = true   // move a damaged file aside instead of failing
    /// let store = try UserDefaultsProvider(suiteName: "com.example.app", options: options)
    /// ```
    public struct Options: Sendable, Hashable {
        /// Whether a suite file that is not a valid property list is moved aside (kept next to
        /// the original as `<suite>.plist.corrupted-<UTC time>`) so that the suite starts empty.
        ///
        /// Off by default: the provider then throws ``AnyDefaultsCore/DefaultsError/Code-swift.struct/corrupted``
        /// naming the file and leaves it untouched. Applies where the provider writes the file
        /// itself (Linux and other platforms without Apple's `cfprefsd`).
        public var recoverCorruptedFile: Bool

        /// How old a read may be with respect to changes other processes make to the suite file:
        /// a read checks the file's identity and modification time when this much time has passed
        /// since the last check. Zero checks on every read. Writes always start from the file's
        /// current content. Ignored on Apple platforms, where `cfprefsd` keeps reads current.
        public var refreshInterval: Duration

        /// How long a write waits for another process that is writing the same preferences
        /// directory before it fails with ``AnyDefaultsCore/DefaultsError/Code-swift.struct/busy``.
        /// On Linux a writer that works (killed and exiting, or writing again and again) is waited
        /// for past it, at most 30 s more; a stopped one is not. Ignored on Apple platforms.
        public var lockTimeout: Duration

        /// Creates options; the defaults fail on a damaged file, re-check the file at most every
        /// 10 ms on reads, and wait up to 10 s for other writers.
        public init(
            recoverCorruptedFile: Bool = false,
            refreshInterval: Duration = .milliseconds(10),
            lockTimeout: Duration = .seconds(10)
        ) {
            self.recoverCorruptedFile = recoverCorruptedFile
            self.refreshInterval = refreshInterval
            self.lockTimeout = lockTimeout
        }
    }
}
