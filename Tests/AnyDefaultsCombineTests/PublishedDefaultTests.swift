import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// `@PublishedDefault`: when it publishes relative to what the property reads, `objectWillChange`,
/// several properties on one key, and properties outside an `ObservableObject`.
@Suite struct PublishedDefaultTests {
    /// What a subscriber sees: the published value, what the property reads and what the store
    /// holds at that moment.
    static func record(_ model: AudioModel, _ defaults: Defaults, into seen: Recorder<String>) -> AnyCancellable {
        model.$volume.sink { published in seen.record("\(published) \(model.volume) \(defaults[.volume])") }
    }

    @Test(arguments: Backend.all)
    func byDefaultItPublishesOnceTheValueIsStored(_ backend: Backend) throws {
        try backend.withStore { defaults, _ in
            let model = AudioModel(store: defaults)
            let seen = Recorder<String>()
            let cancellable = Self.record(model, defaults, into: seen)
            model.volume = 0.8
            model.volume = 0.8  // the same value: nothing published
            defaults[.volume] = 0.3  // from elsewhere
            model.$volume.reset()
            #expect(seen.settled(at: 4) == ["0.5 0.5 0.5", "0.8 0.8 0.8", "0.3 0.3 0.3", "0.5 0.5 0.5"])
            #expect(defaults[.volume] == 0.5)
            #expect(!model.$volume.isSet)
            cancellable.cancel()
        }
    }

    @Test(arguments: Backend.all)
    func withWillSetItPublishesBeforeThePropertyChanges(_ backend: Backend) throws {
        try backend.withStore { defaults, _ in
            let model = AudioModel(store: defaults, behavior: .willSet)
            let seen = Recorder<String>()
            let cancellable = Self.record(model, defaults, into: seen)
            model.volume = 0.8
            #expect(model.volume == 0.8)
            #expect(defaults[.volume] == 0.8)
            defaults[.volume] = 0.3  // from elsewhere: already stored, not yet exposed
            #expect(seen.settled(at: 3) == ["0.5 0.5 0.5", "0.8 0.5 0.5", "0.3 0.8 0.3"])
            #expect(model.volume == 0.3)
            cancellable.cancel()
        }
    }

    /// Setting the property sends `objectWillChange` first, while the property still reads the
    /// old value; a change made elsewhere sends it on the main queue.
    @Test(arguments: [PublishedDefaultBehavior.didSet, .willSet])
    func objectWillChangeFiresBeforeEachChange(_ behavior: PublishedDefaultBehavior) async throws {
        let defaults = Defaults(MemoryProvider())
        let model = AudioModel(store: defaults, behavior: behavior)
        let seen = Recorder<String>()
        let cancellable = model.objectWillChange.sink {
            seen.record("\(model.volume) \(model.theme) \(isOnMainQueue() ? "main" : "other")")
        }
        _ = model.volume  // a read connects the property to the object
        let setter = isOnMainQueue() ? "main" : "other"
        model.volume = 0.8
        model.theme = .dark
        #expect(seen.all == ["0.5 light \(setter)", "0.8 light \(setter)"])

        await Task.detached { defaults[.volume] = 0.2 }.value  // elsewhere, on another thread
        #expect(await eventually { seen.all.count == 3 })
        #expect(seen.all.last?.hasSuffix("main") == true)
        #expect(model.volume == 0.2)
        try await Task.sleep(for: .milliseconds(100))
        #expect(seen.all.count == 3)  // once
        cancellable.cancel()
    }

    /// With a `@Published` property beside it, the synthesized `objectWillChange` serves both.
    @Test func besideAPublishedPropertyTheSynthesizedPublisherServesBoth() {
        let defaults = Defaults(MemoryProvider())
        let model = PlayerModel(store: defaults)
        let changes = Recorder<String>()
        let cancellable = model.objectWillChange.sink { changes.record("\(model.isPlaying) \(model.volume) \(model.nickname ?? "-")") }
        model.isPlaying = true
        model.volume = 0.7
        model.nickname = "ada"
        model.nickname = nil
        #expect(changes.all == ["false 0.5 -", "true 0.5 -", "true 0.7 -", "true 0.7 ada"])
        #expect(defaults.string(forKey: "nickname") == nil)
        cancellable.cancel()
    }

    @MainActor @Test func aMainActorModelIsToldOnTheMainActor() async throws {
        let defaults = Defaults(MemoryProvider())
        let model = InterfaceModel(store: defaults)
        let changes = Recorder<Bool>()
        let tags = Recorder<[String]>()
        var cancellables = [model.objectWillChange.sink { changes.record(isOnMainQueue()) }]
        cancellables.append(model.$tags.sink { tags.record($0) })
        model.tags = ["a"]
        model.isEditing = true
        #expect(changes.all == [true, true])

        await Task.detached { defaults[.tags] = ["b", "c"] }.value
        #expect(await eventually { changes.all.count == 3 && model.tags == ["b", "c"] })
        #expect(changes.all == [true, true, true])
        #expect(tags.all == [[], ["a"], ["b", "c"]])
        cancellables.removeAll()
    }

    /// Two properties on one key, in two objects (over one `Defaults`, or over two instances on the
    /// same storage): a write through one reaches the other's value and publisher.
    @Test(arguments: Backend.all, [PublishedDefaultBehavior.didSet, .willSet])
    func twoPropertiesOnOneKeyStayConsistent(_ backend: Backend, behavior: PublishedDefaultBehavior) throws {
        try backend.withStore { defaults, configuration in
            // A second instance on the same storage, where there is one to open.
            let other = backend.name == "memory" ? defaults : try backend.open(configuration)
            let first = AudioModel(store: defaults, behavior: behavior)
            let second = AudioModel(store: other, behavior: behavior)
            let published = Recorder<Double>()
            let cancellable = second.$volume.sink { published.record($0) }

            first.volume = 0.9
            #expect(waitUntil { second.volume == 0.9 })
            second.volume = 0.4
            #expect(waitUntil { first.volume == 0.4 })
            first.$volume.reset()
            #expect(waitUntil { second.volume == 0.5 })
            #expect(published.settled(at: 4) == [0.5, 0.9, 0.4, 0.5])
            cancellable.cancel()
        }
    }

    /// A class that is not an `ObservableObject`, and a property in a function body.
    @Test func itWorksOutsideObservableObjects() {
        let defaults = Defaults(MemoryProvider())
        let holder = PlainHolder(store: defaults)
        holder.count = 3
        #expect(defaults[.count] == 3)

        @PublishedDefault("launches", store: defaults) var launches = 0
        let values = Recorder<Int>()
        let cancellable = $launches.sink { values.record($0) }
        launches += 1
        launches += 1
        #expect(values.all == [0, 1, 2])
        #expect(defaults.integer(forKey: "launches") == 2)
        #expect(_launches.key.name == "launches")
        cancellable.cancel()
    }

    /// A stored value the property cannot read gives the default, reported through the store's
    /// error handler.
    @Test func aValueThatCannotBeReadGivesTheDefaultAndIsReported() {
        let errors = ErrorLog()
        let defaults = Defaults(MemoryProvider(["theme": "sepia"]), errorHandler: { errors.record($0) })
        let model = AudioModel(store: defaults, behavior: .willSet)
        let themes = Recorder<Theme>()
        let cancellable = model.$theme.sink { themes.record($0) }
        #expect(model.theme == .light)
        #expect(errors.all.map(\.key) == ["theme"])
        model.theme = .dark
        #expect(themes.all == [.light, .dark])
        cancellable.cancel()
    }
}

/// A subscriber that sets the property it listens to, and properties set from many threads.
@Suite struct PublishedDefaultConcurrencyTests {
    static let cases: [(Backend, PublishedDefaultBehavior)] = Backend.all.flatMap { [($0, .didSet), ($0, .willSet)] }

    /// A subscriber that clamps the value it receives: its set, made from inside the delivery,
    /// has the last word, and the values settle after one round.
    @Test(arguments: cases)
    func aSubscriberThatSetsThePropertySettlesIt(_ backend: Backend, behavior: PublishedDefaultBehavior) throws {
        try backend.withStore { defaults, _ in
            let model = AudioModel(store: defaults, behavior: behavior)
            let seen = Recorder<Double>()
            let clamp = model.$volume.sink { volume in
                seen.record(volume)
                if volume > 1 { model.volume = 1 }
            }
            model.volume = 3
            #expect(waitUntil { model.volume == 1 && defaults[.volume] == 1 })
            #expect(seen.settled(at: 3) == [0.5, 3, 1])
            clamp.cancel()
        }
    }

    /// Sets from several threads, and writes to the store beside them: the property, its last
    /// published value and the store end up agreeing, and each subscriber is called one value at
    /// a time.
    @Test(arguments: cases)
    func concurrentChangesConverge(_ backend: Backend, behavior: PublishedDefaultBehavior) throws {
        try backend.withStore { defaults, _ in
            let property = PublishedDefault(.count, store: defaults, behavior: behavior)
            let other = PublishedDefault(.count, store: defaults, behavior: behavior)
            let subscriber = StepSubscriber<Int>(initialDemand: .unlimited)
            property.projectedValue.subscribe(subscriber)
            DispatchQueue.concurrentPerform(iterations: 6) { thread in
                for step in 1...30 {
                    switch thread {
                    case 0: defaults[.count] = -step
                    case 1: other.wrappedValue = 1_000 + step
                    default: property.wrappedValue = thread * 100 + step
                    }
                }
            }
            let stored = defaults[.count]
            let agree = waitUntil { property.wrappedValue == stored && other.wrappedValue == stored && subscriber.values.last == stored }
            let published = subscriber.values.last ?? 0
            #expect(agree, "stored \(stored), properties \(property.wrappedValue) \(other.wrappedValue), published \(published)")
            #expect(subscriber.overlaps == 0)
            subscriber.cancel()
        }
    }

    /// A property with no subscription lets go of its store as soon as it is released, and ends
    /// its observation of the store.
    @Test func aReleasedPropertyEndsItsObservation() {
        let provider = CountingProvider()
        weak var weakDefaults: Defaults?
        do {
            let defaults = Defaults(provider, cached: false)
            weakDefaults = defaults
            let before = defaults.changeObserverCount
            let model = AudioModel(store: defaults)
            model.volume = 0.7
            _ = model.theme
            #expect(defaults.changeObserverCount == before + 2)
        }
        #expect(weakDefaults == nil)
        #expect(provider.observationCount == 0)
    }
}

/// An optional property with a default that is not `nil`: setting `nil` removes the value, and the
/// property reads and publishes its default, in memory as in a store.
@Suite struct OptionalPropertyTests {
    @Test(arguments: [PublishedDefaultBehavior.didSet, .willSet], [false, true])
    func settingNilGivesTheDefault(_ behavior: PublishedDefaultBehavior, mocked: Bool) {
        let defaults = Defaults(MemoryProvider())
        @PublishedDefault("name", store: defaults, behavior: behavior) var name: String? = "Pitt"
        _name.mock = mocked
        let published = Recorder<String>()
        let cancellable = $name.sink { published.record("\($0 ?? "nil") \(name ?? "nil")") }
        name = "François"
        #expect($name.isSet)
        name = nil
        #expect(name == "Pitt")
        #expect(!$name.isSet)
        #expect(defaults.hasValue(forKey: "name") == false)
        let expected = behavior == .didSet
            ? ["Pitt Pitt", "François François", "Pitt Pitt"]
            : ["Pitt Pitt", "François Pitt", "Pitt François"]
        #expect(published.all == expected)
        cancellable.cancel()
    }
}
