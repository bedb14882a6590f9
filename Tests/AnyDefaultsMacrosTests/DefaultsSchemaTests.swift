import AnyDefaultsMacros
import Foundation
import Synchronization
import TestSupport
import Testing

/// `@DefaultsSchema` snapshots over every built-in backend: one consistent read, one batch per
/// write, a stream of snapshots that moves only with the schema's keys.
@Suite struct DefaultsSchemaTests {
    @Test(arguments: TestBackend.all)
    func aSnapshotReadsTheSchemasKeysAndWriteChangesThemInOneBatch(_ backend: TestBackend) throws {
        try backend.withStore { store in
            let defaults = store.defaults
            #expect(defaults.snapshot(AudioSettings.self) == AudioSettings())
            let events = Recorder<DefaultsChangeEvent>()
            let observation = defaults.observe { events.record($0) }

            try defaults.write(AudioSettings.self) { audio in
                audio.volume = 0.8
                audio.muted = true
                audio.device = "speaker"
                audio.layout.columns = 4
                audio.plays += 1
            }
            settle(defaults)
            observation.cancel()

            let audio = defaults.snapshot(AudioSettings.self)
            #expect(audio.volume == 0.8 && audio.muted && audio.device == "speaker" && audio.layout.columns == 4 && audio.plays == 1)
            #expect(defaults.double(forKey: "audio.volume") == 0.8)
            #expect(defaults.bool(forKey: "audio.is_muted"))
            // One event per changed key, and nothing for the properties left alone.
            let keys = events.all.map(\.key).filter { !$0.hasPrefix("settle.") }
            #expect(keys.sorted() == ["audio.device", "audio.is_muted", "audio.layout", "audio.plays", "audio.volume"])

            try defaults.write(AudioSettings.self) { $0.device = nil }
            #expect(!defaults.hasValue(forKey: "audio.device"))
            #expect(defaults.snapshot(AudioSettings.self).device == nil)
            #expect(store.errors.all.isEmpty, "\(store.errors.all)")
        }
    }

    @Test func aWriteIsOneBatchAndNothingIsWrittenWhenTheBodyThrows() throws {
        let provider = BatchCountingProvider()
        let defaults = Defaults(provider)
        try defaults.write(AudioSettings.self) { audio in
            audio.volume = 0.1
            audio.muted = true
        }
        #expect(provider.batches == 1)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try defaults.write(AudioSettings.self) { audio in
                audio.volume = 0.9
                throw Stop()
            }
        }
        #expect(provider.batches == 1)
        #expect(defaults.snapshot(AudioSettings.self).volume == 0.1)
        try defaults.write(AudioSettings.self) { _ in }
        #expect(provider.batches == 1)   // nothing changed, nothing written
    }

    /// A writer changes two keys together, over and over, while a reader takes snapshots: every
    /// snapshot shows both from the same batch.
    @Test(arguments: TestBackend.all)
    func aSnapshotNeverShowsHalfABatch(_ backend: TestBackend) throws {
        try backend.withStore { store in
            let defaults = store.defaults
            let done = Atomic(false)
            let writer = Thread {
                for round in 1...150 {
                    try? defaults.write(Pair.self) { pair in
                        pair.first = round
                        pair.second = round
                    }
                }
                done.store(true, ordering: .sequentiallyConsistent)
            }
            writer.start()
            var torn: [Pair] = []
            var taken = 0
            while !done.load(ordering: .sequentiallyConsistent) || taken == 0 {
                let pair = defaults.snapshot(Pair.self)
                if pair.first != pair.second { torn.append(pair) }
                taken += 1
            }
            #expect(torn.isEmpty, "\(torn.prefix(3))")
            #expect(defaults.snapshot(Pair.self) == Pair(first: 150, second: 150))
        }
    }

    @Test(arguments: TestBackend.all)
    func theStreamYieldsTheCurrentSnapshotThenOnePerChangeOfItsKeys(_ backend: TestBackend) async throws {
        try await backend.withStore { store in
            let defaults = store.defaults
            let snapshots = defaults.snapshots(AudioSettings.self)
            var iterator = snapshots.makeAsyncIterator()
            #expect(await iterator.next() == AudioSettings())

            defaults.set(3, forKey: "unrelated")              // not a key of the schema
            defaults.set(0.5, forKey: "audio.volume")         // the default: the snapshot is unchanged
            try defaults.write(AudioSettings.self) { $0.muted = true; $0.volume = 0.2 }
            let next = await iterator.next()
            #expect(next?.muted == true)
            #expect(next?.volume == 0.2)                       // the batch arrives whole

            defaults.set(9, forKey: "audio.plays")
            #expect(await iterator.next()?.plays == 9)
        }
    }

    @Test(arguments: TestBackend.otherProcesses)
    func aBatchWrittenByAnotherProcessArrivesAsOneSnapshot(_ backend: TestBackend) async throws {
        try await backend.withStore { store in
            let snapshots = store.defaults.snapshots(Pair.self)
            var iterator = snapshots.makeAsyncIterator()
            #expect(await iterator.next() == Pair())

            try store.writeFromAnotherProcess(["other=1", "pair.first=5,pair.second=5"])

            var seen: [Pair] = []
            while let pair = await iterator.next() {
                seen.append(pair)
                if pair == Pair(first: 5, second: 5) { break }
            }
            #expect(seen.allSatisfy { $0.first == $0.second }, "\(seen)")
        }
    }

    @Test(arguments: TestBackend.all)
    func aValueThatCannotBeReadIsReportedAndReadsAsTheDefault(_ backend: TestBackend) throws {
        try backend.withStore { store in
            let defaults = store.defaults
            defaults.set("many", forKey: "audio.plays")
            defaults.set(0.3, forKey: "audio.volume")
            let audio = defaults.snapshot(AudioSettings.self)
            #expect(audio.plays == 0)
            #expect(audio.volume == 0.3)
            #expect(store.errors.all.map(\.key) == ["audio.plays"])
            #expect(throws: Never.self) { try defaults.throwing.snapshot(AudioSettings.self) }
        }
    }

    @Test func registeredDefaultsComeBeforeThePropertiesOwnAndScopesApply() throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        defaults.register(defaults: ["ui.audio.volume": 0.7])
        let ui = defaults.scoped("ui.")
        #expect(ui.snapshot(AudioSettings.self).volume == 0.7)
        try ui.write(AudioSettings.self) { $0.muted = true }
        #expect(defaults.bool(forKey: "ui.audio.is_muted"))
    }

    @Test func snapshotsAreEquatableValuesEvenWithPropertiesThatAreNot() {
        var one = Tagged()
        let two = Tagged()
        #expect(one == two)
        one.tag = Tag(label: "x")
        #expect(one != two)
        let sendable: any Sendable = one
        #expect(sendable is Tagged)
    }
}

/// Two keys written together.
@DefaultsSchema(prefix: "pair.")
struct Pair {
    var first = 0
    var second = 0
}

/// A `Codable` value that is not `Equatable`.
struct Tag: Codable, DefaultsCodable {
    var label: String
}

@DefaultsSchema
struct Tagged {
    var tag = Tag(label: "none")
}

/// An in-memory provider that counts the batches it applies.
final class BatchCountingProvider: DefaultsProvider {
    private let base = AnyDefaultsMemory.MemoryProvider()
    private let applied = Mutex(0)
    var batches: Int { applied.withLock { $0 } }
    var capabilities: DefaultsCapabilities { base.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try base.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try base.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        applied.withLock { $0 += 1 }
        try base.apply(changes)
    }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { base.observe(handler) }
}
