extension PublishedDefault {
    /// The projected value of a ``PublishedDefault`` property (`$volume`): a publisher of its
    /// value, and the operations on the stored value.
    ///
    /// ```swift
    /// let cancellable = settings.$volume.sink { print($0) }   // the current value, then each new one
    /// settings.$volume.reset()                                // removed: the default again
    /// ```
    ///
    /// It publishes the current value on subscription, then each new value — in the property's
    /// ``PublishedDefaultBehavior`` order — on the thread that made or delivered the change (the
    /// first value on the thread that asks for it), never two at once. Demand is honoured: while
    /// a subscriber asks for nothing, only the latest value waits for it. Cancelling lets go of
    /// everything the subscription held.
    public struct Publisher: CombinePublisher, Sendable {
        public typealias Output = Value
        public typealias Failure = Never

        let storage: PublishedDefaultStorage<Value>

        init(_ storage: PublishedDefaultStorage<Value>) {
            self.storage = storage
        }

        /// Attaches `subscriber`: it gets a subscription, then values as it asks for them.
        public func receive<Downstream: Subscriber>(subscriber: Downstream) where Downstream.Input == Value, Downstream.Failure == Never {
            DefaultsPublisher(storage.source).receive(subscriber: subscriber)
        }

        /// The typed key: the name in the store and the default.
        public var key: DefaultsKey<Value> { storage.key }

        /// Removes the stored value (or the one set in memory when mocked), so that the property
        /// reads its default again.
        public func reset() {
            storage.reset()
        }

        /// Whether the store holds a value for the key (or one was set in memory when mocked);
        /// a default does not count.
        public var isSet: Bool { storage.isSet }
    }
}
