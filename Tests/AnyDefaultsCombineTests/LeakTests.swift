import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// Cancelling lets go of everything: the subscriber, the subscription, the observation on the
/// store and the store itself when nothing else holds it. Checked with weak references, on every
/// backend.
@Suite struct LeakTests {
    static let publisherKinds = ["value", "by name", "keys", "snapshot"]

    static func publisher(_ kind: String, of defaults: Defaults) -> AnyPublisher<String, Never> {
        switch kind {
        case "value": defaults.publisher(for: .count).map { "\($0)" }.eraseToAnyPublisher()
        case "by name": defaults.publisher(forKey: "count", as: Int.self).map { "\($0 ?? 0)" }.eraseToAnyPublisher()
        case "keys": defaults.publisher(forKeys: [DefaultsKeys.count]).map { "\($0[.count])" }.eraseToAnyPublisher()
        default: defaults.snapshotPublisher().map { "\($0[.count])" }.eraseToAnyPublisher()
        }
    }

    @Test(arguments: Backend.all, publisherKinds)
    func cancellingReleasesTheSubscriptionTheSubscriberAndTheStore(_ backend: Backend, kind: String) throws {
        try backend.withLocation { configuration in
            weak var weakDefaults: Defaults?
            weak var weakProvider: AnyObject?
            weak var weakSubscription: AnyObject?
            weak var weakSubscriber: StepSubscriber<String>?
            do {
                let subscriber = StepSubscriber<String>(initialDemand: .unlimited)
                do {
                    let defaults = try backend.open(configuration)
                    weakDefaults = defaults
                    weakProvider = defaults.provider as AnyObject
                    Self.publisher(kind, of: defaults).subscribe(subscriber)
                    defaults[.count] = 1
                }
                // The subscription holds the store, which nothing else does now.
                #expect(weakDefaults != nil)
                #expect(waitUntil { subscriber.values == ["0", "1"] }, "\(subscriber.values)")
                weakSubscription = subscriber.subscriptionObject
                weakSubscriber = subscriber
                #expect(weakSubscription != nil)
                subscriber.cancel()
            }
            #expect(weakSubscriber == nil, "the subscriber is still held")
            #expect(weakSubscription == nil, "the subscription is still held")
            #expect(waitUntil { weakDefaults == nil && weakProvider == nil }, "the store is still held")
        }
    }

    /// A sink's `AnyCancellable` cancels when released, with the same effect.
    @Test func releasingTheCancellableReleasesTheStore() {
        weak var weakDefaults: Defaults?
        weak var weakProvider: MemoryProvider?
        var cancellable: AnyCancellable?
        let values = Recorder<Int>()
        do {
            let provider = MemoryProvider()
            let defaults = Defaults(provider)
            weakDefaults = defaults
            weakProvider = provider
            cancellable = defaults.publisher(for: .count).sink { values.record($0) }
            defaults[.count] = 2
        }
        #expect(weakDefaults != nil)
        #expect(values.all == [0, 2])
        #expect(cancellable != nil)
        cancellable = nil
        #expect(weakDefaults == nil)
        #expect(weakProvider == nil)
    }

    /// Each subscription observes the store once (through the `Defaults`'s one observation of the
    /// provider), and its observation ends with it.
    @Test func cancellingEndsTheObservationOnTheProvider() {
        let provider = CountingProvider()
        let defaults = Defaults(provider, cached: false)
        let before = defaults.changeObserverCount
        let cancellables = (0..<3).map { _ in defaults.publisher(for: .count).sink { _ in } }
        #expect(defaults.changeObserverCount == before + 3)
        for cancellable in cancellables { cancellable.cancel() }
        #expect(defaults.changeObserverCount == before)
    }

    /// A model with `@PublishedDefault` properties, subscribed to: subscriptions do not hold the
    /// model, and once they are gone nothing holds the store.
    @Test(arguments: Backend.all)
    func aModelAndItsSubscriptionsReleaseTheStore(_ backend: Backend) throws {
        try backend.withLocation { configuration in
            weak var weakModel: AudioModel?
            weak var weakDefaults: Defaults?
            var cancellables: [AnyCancellable] = []
            let volumes = Recorder<Double>()
            do {
                let defaults = try backend.open(configuration)
                weakDefaults = defaults
                let model = AudioModel(store: defaults)
                weakModel = model
                cancellables.append(model.$volume.sink { volumes.record($0) })
                cancellables.append(model.objectWillChange.sink { _ in })
                model.volume = 0.9
                defaults[.volume] = 0.1  // from elsewhere: the model hears of it
                #expect(model.volume == 0.1)
            }
            #expect(volumes.all == [0.5, 0.9, 0.1])
            #expect(weakModel == nil, "the model is held")
            #expect(weakDefaults != nil)  // by the subscription to `$volume`
            cancellables.removeAll()
            #expect(waitUntil { weakDefaults == nil }, "the store is still held")
        }
    }
}
