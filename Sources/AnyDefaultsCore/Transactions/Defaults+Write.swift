// Transactions: several changes applied together, or not at all.

extension Defaults {
    /// Runs `body` to collect changes, then applies them as one batch (one
    /// ``DefaultsProvider/apply(_:)`` call): all of them or, if anything fails, none.
    ///
    /// ```swift
    /// try defaults.write { tx in
    ///     tx[.volume] = 0.8
    ///     tx[.muted] = false
    ///     if tx[.volume] > 0.5 { tx.set(true, forKey: "loud") }   // sees its own writes
    /// }
    /// ```
    ///
    /// Nothing is written while `body` runs. If `body` throws, or a value cannot be encoded,
    /// nothing is written at all and the error is thrown. Each key is written once, with its
    /// final value, so observers see at most one change per key. Writes made on the store itself
    /// (not through `tx`) inside `body` are not part of the transaction: they happen at once.
    ///
    /// How much "all or nothing" covers depends on the backend (see ``supportsAtomicWrites``):
    /// a batch the provider rejects (an invalid key or value) leaves no trace on every provider;
    /// with ``DefaultsCapabilities/atomicBatch`` that holds even if the process dies part-way.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or the ``DefaultsError`` of an encoding or of the store.
    @discardableResult
    public func write<Result>(_ body: (inout DefaultsTransaction) throws -> Result) throws -> Result {
        var transaction = DefaultsTransaction(self)
        let result = try body(&transaction)
        if let failure = transaction.failure { throw failure }
        let changes = transaction.changes
        guard !changes.isEmpty else { return result }
        try provider.apply(changes)
        for change in changes { forgetDecoded(change.key) }
        return result
    }

    /// Whether ``write(_:)`` is atomic even if the process dies part-way: the backend applies a
    /// batch all or nothing (``DefaultsCapabilities/atomicBatch``). Without it, a batch is still
    /// validated before anything is written, but a crash during the write may leave part of it.
    public var supportsAtomicWrites: Bool {
        provider.capabilities.contains(.atomicBatch)
    }
}
