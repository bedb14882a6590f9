import Dispatch

// The async write path every provider has. A write through the synchronous API blocks its thread
// until the backend is done: a file sync for the local backends, a round trip and a commit for a
// server. From async code that thread belongs to Swift concurrency's cooperative pool (as many
// threads as cores), so these variants let the task suspend instead.
//
// The defaults below run the synchronous operation on a thread outside that pool (Dispatch's
// global queue) and resume the task when it returns: right for backends whose writes block on
// local I/O. A backend with asynchronous I/O of its own overrides them (PostgreSQLProvider), and
// one whose writes never block overrides them to run inline (MemoryProvider).

extension DefaultsProvider {
    /// Stores `value` under `key` without blocking the calling thread: by default the synchronous
    /// ``setValue(_:forKey:)`` on a thread outside Swift concurrency's cooperative pool.
    ///
    /// ```swift
    /// try await store.setValueAsync(.string("dark"), forKey: "ui.theme")
    /// ```
    ///
    /// Cancelling the task does not interrupt a write that has started.
    public func setValueAsync(_ value: DefaultsValue, forKey key: String) async throws(DefaultsError) {
        try await BlockingWrite.run { () throws(DefaultsError) in try self.setValue(value, forKey: key) }
    }

    /// Removes `key` without blocking the calling thread: by default the synchronous
    /// ``removeValue(forKey:)`` on a thread outside the cooperative pool.
    public func removeValueAsync(forKey key: String) async throws(DefaultsError) {
        try await BlockingWrite.run { () throws(DefaultsError) in try self.removeValue(forKey: key) }
    }

    /// Applies `changes` as one batch without blocking the calling thread: by default the
    /// synchronous ``apply(_:)`` on a thread outside the cooperative pool.
    public func applyAsync(_ changes: [DefaultsChange]) async throws(DefaultsError) {
        try await BlockingWrite.run { () throws(DefaultsError) in try self.apply(changes) }
    }

    /// Removes every key without blocking the calling thread: by default the synchronous
    /// ``removeAll()`` on a thread outside the cooperative pool.
    public func removeAllAsync() async throws(DefaultsError) {
        try await BlockingWrite.run { () throws(DefaultsError) in try self.removeAll() }
    }
}

/// Runs a blocking write on Dispatch's global queue, so that the task awaiting it gives its
/// cooperative thread back while the write blocks.
package enum BlockingWrite {
    package static func run(_ write: @escaping @Sendable () throws(DefaultsError) -> Void) async throws(DefaultsError) {
        try await value(write)
    }

    /// ``run(_:)`` for a write that returns something.
    package static func value<T: Sendable>(_ write: @escaping @Sendable () throws(DefaultsError) -> T) async throws(DefaultsError) -> T {
        let result: Result<T, DefaultsError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(DefaultsError) in try write() })
            }
        }
        return try result.get()
    }
}
