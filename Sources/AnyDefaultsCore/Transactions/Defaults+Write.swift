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
    /// The body and the call throw ``DefaultsError``, like the rest of the API (typed throws):
    /// a body that throws nothing, or is written `{ (tx) throws(DefaultsError) in … }`, gives a
    /// `catch` whose `error` is a `DefaultsError`. (Swift infers `any Error` for a closure that
    /// contains a `throw` unless it is annotated; such a body takes the overload below.)
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or the ``DefaultsError`` of an encoding or of the store.
    @discardableResult
    public func write<Result>(_ body: (inout DefaultsTransaction) throws(DefaultsError) -> Result) throws(DefaultsError) -> Result {
        var transaction = DefaultsTransaction(self)
        let result = try body(&transaction)
        try commit(transaction)
        return result
    }

    /// ``write(_:)`` for a body that throws errors of another type: they are thrown as they are,
    /// with nothing written; the store's errors are ``DefaultsError``s.
    ///
    /// ```swift
    /// try defaults.write { tx in
    ///     tx[.layout] = try Layout(parsing: text)      // a parser's own error aborts the write
    /// }
    /// ```
    @_disfavoredOverload
    @discardableResult
    public func write<Result, Failure: Error>(_ body: (inout DefaultsTransaction) throws(Failure) -> Result) throws -> Result {
        var transaction = DefaultsTransaction(self)
        let result = try body(&transaction)
        try commit(transaction)
        return result
    }

    /// Applies what a transaction collected, as one batch.
    private func commit(_ transaction: DefaultsTransaction) throws(DefaultsError) {
        if let failure = transaction.failure { throw failure }
        let changes = transaction.changes
        guard !changes.isEmpty else { return }
        try provider.apply(changes)
        for change in changes { forgetDecoded(change.key) }
    }

    /// Whether ``write(_:)`` is atomic even if the process dies part-way: the backend applies a
    /// batch all or nothing (``DefaultsCapabilities/atomicBatch``). Without it, a batch is still
    /// validated before anything is written, but a crash during the write may leave part of it.
    public var supportsAtomicWrites: Bool {
        provider.capabilities.contains(.atomicBatch)
    }
}
