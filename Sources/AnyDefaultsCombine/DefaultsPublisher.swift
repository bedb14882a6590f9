/// A publisher of a value read from a defaults store: the value when you subscribe, then the new
/// value after each change, from anywhere the store learns of changes.
///
/// ```swift
/// let cancellable = defaults.publisher(for: .volume).sink { volume in
///     player.volume = volume               // the current volume first, then each new one
/// }
/// ```
///
/// Get one from `defaults.publisher(for:)`, `publisher(forKey:as:)`, `publisher(forKeys:)` or
/// `snapshotPublisher()`. It never fails, and every subscription behaves the same way:
///
/// - **What**: the current value on subscription, then one value per change of what the store
///   holds, made through this `Defaults`, another one on the same provider, another instance on
///   the same storage, or another process where the backend reports it (`externalChanges`).
///   The value is read again after each change, so it is never older than one published before;
///   changes that come together may be published as one, the latest. A value equal (in its
///   stored form) to the last one published is not published again.
/// - **Where**: values arrive on the thread that delivers the store's change (often the writer's,
///   during its write; a backend's watcher thread for changes made elsewhere), and the first
///   value on the thread that requests it. Never two at once. Use `receive(on:)` to move them.
/// - **Demand**: honoured. While the subscriber asks for nothing, only the latest value waits
///   and is delivered when it asks: a slow subscriber gets the newest value, not a backlog.
/// - **Errors**: a value that cannot be read (a stored value of another type, a store that
///   fails) is reported to the store's error handler and published as the fallback the
///   `Defaults` reads give (the key's default, or `nil`).
/// - **Cancel** stops observing the store and lets go of the subscriber, the subscription and
///   the store (if nothing else holds it).
public struct DefaultsPublisher<Output: Sendable>: CombinePublisher, Sendable {
    public typealias Failure = Never

    let source: PublicationSource<Output>

    init(_ source: PublicationSource<Output>) {
        self.source = source
    }

    /// Attaches `subscriber`: it gets a subscription, then values as it asks for them.
    public func receive<Downstream: Subscriber>(subscriber: Downstream) where Downstream.Input == Output, Downstream.Failure == Never {
        let subscription = DefaultsSubscription(subscriber, source: source)
        subscription.start()
        subscriber.receive(subscription: subscription)
    }
}
