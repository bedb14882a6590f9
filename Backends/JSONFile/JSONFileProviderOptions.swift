import AnyDefaultsCore

extension JSONFileProvider {
    /// How a provider treats its file.
    public struct Options: Sendable {
        /// What to do with a file that cannot be read as a settings file.
        public enum CorruptionPolicy: Sendable, Hashable {
            /// Throw `corrupted` and leave the file alone. The default.
            case fail
            /// Rename the file to `<file>.corrupted-<YYYYMMDDTHHMMSSZ>` next to it, keeping it,
            /// and start with an empty store. ``Options/onRecovery`` is told.
            case moveAside
        }

        /// What to do with a bad file. Default: ``CorruptionPolicy/fail``.
        public var corruptionPolicy: CorruptionPolicy
        /// How long a write waits for another process's lock before it throws `busy`.
        /// Default: 10 seconds. On Linux a holder that works (killed and exiting, or writing again
        /// and again) is waited for past it, at most 30 s more; a stopped one is not.
        public var lockTimeout: Duration
        /// If set, a read first checks (with one `stat`) whether another process changed the file,
        /// at most once per interval. Default: `nil`, reads never touch the disk.
        public var refreshInterval: Duration?
        /// Whether missing parent directories are created (owner-only). Default: `true`.
        public var createsDirectories: Bool
        /// Whether the file is watched, so that changes made elsewhere reach memory and observers
        /// without a write or ``JSONFileProvider/refresh()``. Default: `true`. Without it the
        /// provider does not claim ``AnyDefaultsCore/DefaultsCapabilities/externalChanges``.
        public var watchesExternalChanges: Bool
        /// Called after a bad file was moved aside.
        public var onRecovery: (@Sendable (JSONFileRecovery) -> Void)?

        /// Options with the given values; the defaults suit most programs.
        ///
        /// ```swift
        /// let options = JSONFileProvider.Options(corruptionPolicy: .moveAside, lockTimeout: .seconds(2))
        /// ```
        public init(
            corruptionPolicy: CorruptionPolicy = .fail,
            lockTimeout: Duration = .seconds(10),
            refreshInterval: Duration? = nil,
            createsDirectories: Bool = true,
            watchesExternalChanges: Bool = true,
            onRecovery: (@Sendable (JSONFileRecovery) -> Void)? = nil
        ) {
            (self.corruptionPolicy, self.lockTimeout, self.refreshInterval) = (corruptionPolicy, lockTimeout, refreshInterval)
            (self.createsDirectories, self.watchesExternalChanges) = (createsDirectories, watchesExternalChanges)
            self.onRecovery = onRecovery
        }
    }
}
