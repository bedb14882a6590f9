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
    /// ``copyAll(to:progress:)`` does, then, only once that batch succeeded and was made durable
    /// (``makeDurable()``, so that a power loss cannot leave the keys in neither store), removes
    /// from this store the keys that still hold the value copied, compared and removed in one step
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

    /// The one implementation of every copy and move (of stores here, of scopes in
    /// ``ThrowingDefaults/copyAll(to:progress:)``): the checks, one batch to the destination, and
    /// for a move the compare-and-remove in the source. The keys under `sourcePrefix` are written
    /// under `destinationPrefix` instead; the transfer reports them without either prefix.
    func transfer(
        to destination: any DefaultsProvider, moving: Bool, sourcePrefix: String = "", destinationPrefix: String = "",
        progress: (DefaultsStoreTransfer.Stage) -> Void
    ) throws(DefaultsError) -> DefaultsStoreTransfer {
        try checkTransfer(to: destination, moving: moving, sourcePrefix: sourcePrefix, destinationPrefix: destinationPrefix)
        progress(.reading)
        let scope = DefaultsKeyPrefix(sourcePrefix)
        let stored = try scope.isEmpty ? allValues() : allValues(withPrefix: sourcePrefix)
        // A scope's names are what follows its prefix in canonical form (a prefix spelled in NFD
        // is the scope of the NFC keys); the key equal to the prefix has no name in the scope.
        let named = stored.compactMap { entry in
            scope.remainder(of: entry.key).flatMap { name in
                name.isEmpty && !scope.isEmpty ? nil : (name: name, key: entry.key, value: entry.value)
            }
        }.sorted { $0.key.utf8Precedes($1.key) }
        let names = named.map(\.name)
        let values = named.map { (key: $0.key, value: $0.value) }
        progress(.writing(values.count))
        try destination.apply(zip(names, values).map { .set(destinationPrefix + $0, $1.value) })
        var transfer = DefaultsStoreTransfer(copied: names, removed: [], keptInSource: [])
        guard moving else { return transfer }
        // Nothing leaves the source before the copy would survive a power loss: a destination that
        // syncs lazily (SQLite's NORMAL, LMDB without sync) could lose it after the source's
        // removal, durable at once, and the keys would be in neither store.
        try destination.makeDurable()
        progress(.removing(values.count))
        let removed = Set(try removeValues(ifUnchanged: Dictionary(values, uniquingKeysWith: { first, _ in first })))
        transfer.removed = zip(names, values).filter { removed.contains($1.key) }.map(\.0)
        transfer.keptInSource = zip(names, values).filter { !removed.contains($1.key) }.map(\.0)
        return transfer
    }

    /// Refuses a transfer onto the same keys of this same store (whole stores, or scopes of which
    /// one contains the other), and a move into a store that does not persist.
    private func checkTransfer(
        to destination: any DefaultsProvider, moving: Bool, sourcePrefix: String, destinationPrefix: String
    ) throws(DefaultsError) {
        let sameInstance = destination as AnyObject === self as AnyObject
        let overlapping = storeIdentity.flatMap { one in destination.storeIdentity.map { one.overlaps($0) } } ?? false
        // Canonical forms, as stores compare keys: "é" composed and decomposed are one key.
        let source = DefaultsKeyPrefix(sourcePrefix), target = DefaultsKeyPrefix(destinationPrefix)
        let nested = source.containsCanonical(target.canonical) || target.containsCanonical(source.canonical)
        if (sameInstance || overlapping) && nested {
            throw DefaultsError(
                .invalidConfiguration,
                sourcePrefix.isEmpty && destinationPrefix.isEmpty
                    ? "The source and the destination are the same store: nothing was copied."
                    : "The source and the destination are scopes of the same store and one contains the other (\"\(sourcePrefix)\", \"\(destinationPrefix)\"): nothing was copied.",
                backend: "\(Self.self)")
        }
        if moving, !destination.capabilities.contains(.persistent) {
            throw DefaultsError(
                .unsupported, "The destination does not persist: a move would lose the keys when it is released. Copy instead, or move to a store that persists.",
                backend: "\(type(of: destination))")
        }
    }
}
