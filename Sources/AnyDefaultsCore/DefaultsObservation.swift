import Synchronization

/// A registration for change events, returned by ``DefaultsProvider/observe(_:)``.
///
/// Events flow until ``cancel()`` is called or the observation is released, so keep it as long as
/// you want them.
///
/// ```swift
/// let observation = store.observe { event in print(event.key) }
/// // ...
/// observation.cancel()
/// ```
public final class DefaultsObservation: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    /// Creates an observation that calls `onCancel` once, when first cancelled or released.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops the events: once it returns, no event reaches the handler but one whose delivery
    /// had already begun on another thread. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
