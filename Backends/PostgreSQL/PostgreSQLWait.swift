import AnyDefaultsCore
import Dispatch
import PostgresNIO
import Synchronization

/// Waits for the server on behalf of the synchronous API, always with a bound.
///
/// A synchronous call (opening a store, `setValue`, `apply`) sends its statement through the
/// connection's event loop and blocks its own thread until the answer, at most `bound`. It
/// refuses to block a SwiftNIO event loop thread: that would stall every connection on the loop,
/// and deadlock if the store's connection is one of them. From there (or from any async code),
/// use the async writes (`applyAsync`, `Defaults.async`), which suspend instead.
enum PostgreSQLWait {
    static func result<Value: Sendable>(
        of start: @autoclosure () -> EventLoopFuture<Value>, within bound: Duration, action: String
    ) throws(DefaultsError) -> Value {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw .postgres(
                .unsupported,
                "\(action) cannot wait for the server on a SwiftNIO event loop thread; use the async API (applyAsync, setValueAsync, Defaults.async, PostgreSQLProvider.open) there.")
        }
        // Started only once refused or not: a refused write must send nothing to the server.
        let future = start()
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
        future.whenComplete { result in
            outcome.withLock { $0 = result }
            semaphore.signal()
        }
        if semaphore.wait(timeout: .now() + .nanoseconds(bound.clampedNanosecondsInt)) == .timedOut {
            throw .postgres(
                .ioFailure,
                "\(action) got no answer from the server within \(bound); a write may or may not have been committed (the store shows which once the server answers).")
        }
        switch outcome.withLock({ $0 }) {
        case .success(let value): return value
        case .failure(let error): throw .postgres(error, while: action)
        case nil: throw .postgres(.internalError, "\(action) was woken without an answer.")
        }
    }

    /// The answer to `future`, for async callers: the task suspends, no thread blocks.
    static func result<Value: Sendable>(of future: EventLoopFuture<Value>, action: String) async throws(DefaultsError) -> Value {
        do {
            return try await future.get()
        } catch {
            throw .postgres(error, while: action)
        }
    }
}
