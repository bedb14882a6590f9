// Copying or moving a whole store, or one scope of it, in code: what `anydefaults migrate` does,
// through the facade (and so through both caches).

extension Defaults {
    /// Copies every key of this store (of this scope, for a ``scoped(_:)`` view) to `destination`
    /// (under its scope) in one batch there; the destination's other keys are kept.
    ///
    /// ```swift
    /// let legacy = try Defaults(url: "json:~/.config/myapp/settings.json")
    /// let settings = try Defaults(url: "sqlite:~/.local/share/myapp/settings.sqlite")
    /// legacy.copyAll(to: settings)
    /// legacy.scoped("tenant/acme/").copyAll(to: settings.scoped("tenant/acme-eu/"))
    /// ```
    ///
    /// Errors are reported to the error handler; ``ThrowingDefaults/copyAll(to:progress:)``
    /// throws them and says what was copied.
    public func copyAll(to destination: Defaults) {
        reporting { () throws(DefaultsError) in try throwing.copyAll(to: destination) }
    }

    /// Moves every key of this store (of this scope) to `destination`: copies them as
    /// ``copyAll(to:)`` does, then removes from here those that still hold the value copied
    /// (see ``ThrowingDefaults/moveAll(to:progress:)``).
    ///
    /// ```swift
    /// legacy.moveAll(to: settings)
    /// ```
    public func moveAll(to destination: Defaults) {
        reporting { () throws(DefaultsError) in try throwing.moveAll(to: destination) }
    }
}

extension ThrowingDefaults {
    /// Copies every key of this store (of this scope, for a scoped view) to `destination` (under
    /// its scope) in one batch there, all or nothing where the destination has
    /// ``DefaultsCapabilities/atomicBatch``; the destination's other keys are kept. The keys are
    /// reported as the views name them (without their scopes' prefixes).
    ///
    /// ```swift
    /// let copied = try legacy.throwing.copyAll(to: settings)
    /// print("copied", copied.copied.count, "keys")
    /// ```
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidConfiguration`` when both are the same
    ///   store (see ``DefaultsProvider/copyAll(to:progress:)``) and their scopes are the same or one
    ///   contains the other, before anything is read or written; else the stores' errors.
    @discardableResult
    public func copyAll(
        to destination: Defaults, progress: (DefaultsStoreTransfer.Stage) -> Void = { _ in }
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        try transfer(to: destination, moving: false, progress: progress)
    }

    /// Moves every key of this store (of this scope) to `destination`: copies them as
    /// ``copyAll(to:progress:)`` does, then, only once that batch succeeded, removes here the keys
    /// that still hold the value copied, compared and removed in one step; a key another writer
    /// changed meanwhile keeps its new value here and is listed in
    /// ``DefaultsStoreTransfer/keptInSource``.
    ///
    /// ```swift
    /// let moved = try legacy.throwing.moveAll(to: settings)
    /// if !moved.keptInSource.isEmpty { print("changed during the move:", moved.keptInSource) }
    /// ```
    ///
    /// - Throws: as ``copyAll(to:progress:)``, and ``DefaultsError/Code-swift.struct/unsupported``
    ///   when `destination` does not persist, before anything is read or written.
    @discardableResult
    public func moveAll(
        to destination: Defaults, progress: (DefaultsStoreTransfer.Stage) -> Void = { _ in }
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        try transfer(to: destination, moving: true, progress: progress)
    }

    private func transfer(
        to destination: Defaults, moving: Bool, progress: (DefaultsStoreTransfer.Stage) -> Void
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        // Values decoded before the transfer may be stale after it, also when it fails halfway.
        defer {
            destination.shared.decoded.removeAll(withPrefix: destination.prefix)
            if moving { defaults.shared.decoded.removeAll(withPrefix: defaults.prefix) }
        }
        return try defaults.provider.transfer(
            to: destination.provider, moving: moving, sourcePrefix: defaults.prefix,
            destinationPrefix: destination.prefix, progress: progress)
    }
}
