// Copying or moving a whole store to another, as `anydefaults migrate` does.

/// What ``DefaultsProvider/copyAll(to:progress:)`` or ``DefaultsProvider/moveAll(to:progress:)``
/// did.
public struct DefaultsStoreTransfer: Sendable, Equatable {
    /// The keys written to the destination (every key of the source), in UTF-8 order.
    public var copied: [String]
    /// The keys removed from the source by a move (empty for a copy).
    public var removed: [String]
    /// The keys a move copied but left in the source because another writer changed them during
    /// the move: they keep their new value there (the destination holds the value copied).
    public var keptInSource: [String]

    /// The stage a transfer reached, for a progress display.
    public enum Stage: Sendable, Equatable {
        /// Reading every value of the source.
        case reading
        /// Writing this many keys to the destination, in one batch.
        case writing(Int)
        /// Removing this many keys from the source (a move), those still unchanged.
        case removing(Int)
    }
}

extension DefaultsProvider {
    /// Copies every key and value of this store to `destination` in one batch there (all or
    /// nothing where the destination has ``DefaultsCapabilities/atomicBatch``); its other keys
    /// are kept.
    ///
    /// ```swift
    /// let legacy = try JSONFileProvider(path: "old.json")
    /// try legacy.copyAll(to: try SQLiteProvider(path: "settings.sqlite"))
    /// ```
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidConfiguration`` when both are the same
    ///   store (the same instance, or instances whose ``storeIdentity`` overlaps: one file by two
    ///   paths, a link), before anything is read or written; else the stores' errors.
    @discardableResult
    public func copyAll(
        to destination: any DefaultsProvider, progress: (DefaultsStoreTransfer.Stage) -> Void = { _ in }
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        try transfer(to: destination, moving: false, progress: progress)
    }

    /// Moves every key and value of this store to `destination`: copies them as
    /// ``copyAll(to:progress:)`` does, then, only once that batch succeeded, removes from this
    /// store the keys that still hold the value copied, compared and removed in one step
    /// (``removeValues(ifUnchanged:)``): a key another writer changed meanwhile keeps its new
    /// value here, and is listed in ``DefaultsStoreTransfer/keptInSource``.
    ///
    /// ```swift
    /// let moved = try legacy.moveAll(to: settings)
    /// if !moved.keptInSource.isEmpty { print("changed during the move:", moved.keptInSource) }
    /// ```
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidConfiguration`` for the same store (as
    ///   ``copyAll(to:progress:)``), ``DefaultsError/Code-swift.struct/unsupported`` when
    ///   `destination` does not persist (``DefaultsCapabilities/persistent``; the values would be
    ///   lost with it), both before anything is read or written; else the stores' errors, with
    ///   nothing removed from this store if the copy failed.
    @discardableResult
    public func moveAll(
        to destination: any DefaultsProvider, progress: (DefaultsStoreTransfer.Stage) -> Void = { _ in }
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        try transfer(to: destination, moving: true, progress: progress)
    }

    /// The one implementation of both: the checks, one batch to the destination, and for a move
    /// the compare-and-remove in the source.
    private func transfer(
        to destination: any DefaultsProvider, moving: Bool, progress: (DefaultsStoreTransfer.Stage) -> Void
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        try checkTransfer(to: destination, moving: moving)
        progress(.reading)
        let values = try allValues().sorted { $0.key.utf8Precedes($1.key) }
        progress(.writing(values.count))
        try destination.apply(values.map { .set($0.key, $0.value) })
        var transfer = DefaultsStoreTransfer(copied: values.map(\.key), removed: [], keptInSource: [])
        guard moving else { return transfer }
        progress(.removing(values.count))
        transfer.removed = try removeValues(ifUnchanged: Dictionary(values, uniquingKeysWith: { first, _ in first }))
        let removed = Set(transfer.removed)
        transfer.keptInSource = transfer.copied.filter { !removed.contains($0) }
        return transfer
    }

    /// Refuses a transfer onto this same store, and a move into a store that does not persist.
    private func checkTransfer(to destination: any DefaultsProvider, moving: Bool) throws(DefaultsError) {
        let sameInstance = destination as AnyObject === self as AnyObject
        let overlapping = storeIdentity.flatMap { one in destination.storeIdentity.map { one.overlaps($0) } } ?? false
        if sameInstance || overlapping {
            throw DefaultsError(
                .invalidConfiguration, "The source and the destination are the same store: nothing was copied.",
                backend: "\(Self.self)")
        }
        if moving, !destination.capabilities.contains(.persistent) {
            throw DefaultsError(
                .unsupported, "The destination does not persist: a move would lose the keys when it is released. Copy instead, or move to a store that persists.",
                backend: "\(type(of: destination))")
        }
    }
}
