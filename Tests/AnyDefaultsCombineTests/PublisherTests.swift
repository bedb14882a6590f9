import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// The publishers of `Defaults` on every built-in backend, plain and behind a cache.
@Suite struct PublisherTests {
    static let variants = Backend.all.flatMap { backend in [(backend, true), (backend, false)] }

    @Test(arguments: variants)
    func aKeyPublishesItsValueThenEachChangeAndNoRepeats(_ backend: Backend, cached: Bool) throws {
        try backend.withStore(cached: cached) { defaults, _ in
            defaults[.volume] = 0.2
            let received = Recorder<Double>()
            let cancellable = defaults.publisher(for: .volume).sink { received.record($0) }
            #expect(received.all == [0.2])  // at once, on subscription

            defaults[.volume] = 0.3
            defaults[.volume] = 0.3  // the value already stored: nothing
            defaults[.muted] = true  // another key: nothing
            defaults.reset(.volume)  // removed: the key's default
            defaults.set(0.9, forKey: "volume")  // by name, through the same store
            try defaults.write { tx in
                tx[.volume] = 0.7
                tx[.muted] = false
            }
            #expect(received.settled(at: 5) == [0.2, 0.3, 0.5, 0.9, 0.7])

            cancellable.cancel()
            defaults[.volume] = 0.1
            #expect(received.settled(at: 5, settle: .milliseconds(100)) == [0.2, 0.3, 0.5, 0.9, 0.7])  // nothing after cancel
        }
    }

    @Test(arguments: variants)
    func registeredDefaultsAndScopesAreRespected(_ backend: Backend, cached: Bool) throws {
        try backend.withStore(cached: cached) { defaults, _ in
            defaults.register(defaults: ["ui.theme": "dark"])
            let ui = defaults.scoped("ui.")
            let themes = Recorder<Theme>()
            let cancellable = ui.publisher(for: .theme).sink { themes.record($0) }
            defaults.set("light", forKey: "theme")  // outside the scope: nothing
            ui[.theme] = .light
            defaults.removeObject(forKey: "ui.theme")  // back to the registered default
            #expect(themes.settled(at: 3) == [.dark, .light, .dark])
            cancellable.cancel()
        }
    }

    @Test(arguments: variants)
    func aKeyByNamePublishesOptionalValues(_ backend: Backend, cached: Bool) throws {
        try backend.withStore(cached: cached) { defaults, _ in
            let fonts = Recorder<String?>()
            let cancellable = defaults.publisher(forKey: "ui.font", as: String.self).sink { fonts.record($0) }
            defaults.set("mono", forKey: "ui.font")
            defaults.removeObject(forKey: "ui.font")
            defaults.set("serif", forKey: "ui.font")
            #expect(fonts.settled(at: 4) == [nil, "mono", nil, "serif"])
            cancellable.cancel()
        }
    }

    @Test(arguments: variants)
    func aSetOfKeysPublishesSnapshotsOfThem(_ backend: Backend, cached: Bool) throws {
        try backend.withStore(cached: cached) { defaults, _ in
            defaults[.volume] = 0.4
            let audio = Recorder<DefaultsSnapshot>()
            let cancellable = defaults.publisher(forKeys: [DefaultsKeys.volume, DefaultsKeys.muted]).sink { audio.record($0) }
            defaults[.muted] = true
            defaults[.theme] = .dark  // not one of them: nothing
            try defaults.write { tx in
                tx[.volume] = 0.6
                tx[.muted] = false
            }
            let snapshots = audio.settled(at: 3)
            #expect(snapshots.map { $0[.volume] } == [0.4, 0.4, 0.6])
            #expect(snapshots.map { $0[.muted] } == [false, true, false])
            #expect(snapshots.allSatisfy { !$0.hasValue(forKey: "theme") })
            cancellable.cancel()
        }
    }

    @Test(arguments: variants)
    func theWholeStorePublishesSnapshots(_ backend: Backend, cached: Bool) throws {
        try backend.withStore(cached: cached) { defaults, _ in
            let snapshots = Recorder<DefaultsSnapshot>()
            let cancellable = defaults.snapshotPublisher().sink { snapshots.record($0) }
            defaults[.theme] = .dark
            defaults[.count] = 3
            defaults.removeObject(forKey: "theme")
            let received = snapshots.settled(at: 4)
            #expect(received.map { Set($0.keys) } == [[], ["theme"], ["theme", "count"], ["count"]])
            #expect(received.last?[.count] == 3)
            cancellable.cancel()
        }
    }

    /// A stored value of the wrong type publishes the default and is reported through the store's
    /// error handler; it is left in place, and a good value later is published as usual.
    @Test(arguments: variants)
    func aValueThatCannotBeReadPublishesTheDefaultAndIsReported(_ backend: Backend, cached: Bool) throws {
        let errors = ErrorLog()
        try backend.withStore(cached: cached, errors: errors) { defaults, _ in
            defaults.set("loud", forKey: "volume")
            defaults.set(["a", "b"], forKey: "tags")
            let volumes = Recorder<Double>()
            let fonts = Recorder<Int?>()
            let volume = defaults.publisher(for: .volume).sink { volumes.record($0) }
            let font = defaults.publisher(forKey: "tags", as: Int.self).sink { fonts.record($0) }
            #expect(volumes.all == [0.5])
            #expect(fonts.all == [nil])
            #expect(errors.all.map(\.key) == ["volume", "tags"])
            #expect(errors.all.allSatisfy { $0.code == .typeMismatch })
            #expect(defaults.string(forKey: "volume") == "loud")  // kept

            defaults[.volume] = 0.8
            defaults.set(3, forKey: "tags")
            #expect(volumes.settled(at: 2) == [0.5, 0.8])
            #expect(fonts.settled(at: 2) == [nil, 3])
            #expect(errors.all.count == 2)
            volume.cancel()
            font.cancel()
        }
    }

    /// With `decodingFailurePolicy: .removeValue`, the value that cannot be read is removed, as
    /// the facade's reads do; the publisher does not loop on its own removal.
    @Test func theDecodingFailurePolicyApplies() {
        let errors = ErrorLog()
        let defaults = Defaults(
            MemoryProvider(["volume": "loud"]), errorHandler: { errors.record($0) }, decodingFailurePolicy: .removeValue)
        let volumes = Recorder<Double>()
        let cancellable = defaults.publisher(for: .volume).sink { volumes.record($0) }
        #expect(volumes.settled(at: 1) == [0.5])
        #expect(!defaults.hasValue(forKey: "volume"))
        #expect(errors.all.map(\.code) == [.typeMismatch])
        cancellable.cancel()
    }

    /// Publishers over stores, chained with ordinary Combine operators; the re-exported module
    /// (Combine, or OpenCombine and its Dispatch schedulers) comes with the one import.
    @Test func publishersComposeWithCombineOperatorsAndSchedulers() throws {
        let defaults = Defaults(MemoryProvider())
        let queue = DispatchQueue(label: "receiver")
        let onQueue = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: onQueue, value: true)
        let labels = Recorder<String>()
        #if canImport(Combine)
        let scheduler = queue
        #else
        let scheduler = queue.ocombine
        #endif
        let cancellable = defaults.publisher(for: .volume)
            .map { volume in "\(Int(volume * 100))%" }
            .removeDuplicates()
            .receive(on: scheduler)
            .sink { label in labels.record(DispatchQueue.getSpecific(key: onQueue) == true ? label : "off the queue") }
        defaults[.volume] = 0.8
        defaults[.volume] = 0.801  // the same label: removed by the operator
        defaults[.volume] = 0.3
        #expect(labels.settled(at: 3) == ["50%", "80%", "30%"])
        cancellable.cancel()
    }
}
