import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// `migrate(to:)` between `@PublishedDefault` properties: once, within a store and across
/// stores, with mocks, and with a value that cannot be read. (Two launches of a real program:
/// `ChildProcessTests`.)
@Suite struct MigrationTests {
    /// A program that moved a Double count to an Int index, on the stores it is given.
    final class Service {
        @PublishedDefault private var legacyCount: Double
        @PublishedDefault var index: Int
        var moved = false

        init(source: Defaults, target: Defaults? = nil, mock: Bool = false) {
            _legacyCount = PublishedDefault(wrappedValue: 1.0, "count", store: source)
            _index = PublishedDefault(wrappedValue: 0, "index", store: target ?? source)
            _legacyCount.mock = mock
            _index.mock = mock
            moved = $legacyCount.migrate(to: $index) { Int($0) - 1 }
        }

        var legacyIsSet: Bool { $legacyCount.isSet }
        func setLegacy(_ count: Double) { legacyCount = count }
        func migrateAgain() -> Bool { $legacyCount.migrate(to: $index) { Int($0) - 1 } }
    }

    @Test(arguments: Backend.persistent)
    func withinAStoreItMovesOnceAcrossLaunches(_ backend: Backend) throws {
        try backend.withLocation { configuration in
            do {  // the old version
                try backend.open(configuration).set(5.0, forKey: "count")
            }
            do {  // the first launch of the new one
                let defaults = try backend.open(configuration)
                let service = Service(source: defaults)
                #expect(service.moved)
                #expect(service.index == 4)
                #expect(Set(defaults.keys()) == ["index", "AnyDefaults.migrated:count>index"])
            }
            do {  // the old version again
                try backend.open(configuration).set(8.0, forKey: "count")
            }
            do {  // the second launch: nothing moves, and the old value is left alone
                let defaults = try backend.open(configuration)
                let service = Service(source: defaults)
                #expect(!service.moved)
                #expect(service.index == 4)
                #expect(defaults.double(forKey: "count") == 8)
            }
        }
    }

    @Test func acrossStoresTheTargetStoreKeepsTheRecord() {
        let legacy = Defaults(MemoryProvider(["count": 3.0]))
        let current = Defaults(MemoryProvider())
        let indexes = Recorder<Int>()
        let first = Service(source: legacy, target: current)
        #expect(first.moved)
        let cancellable = first.$index.sink { indexes.record($0) }
        #expect(legacy.keys().isEmpty)
        #expect(current.integer(forKey: "index") == 2)
        #expect(current.bool(forKey: "AnyDefaults.migrated:count>index"))

        legacy.set(7.0, forKey: "count")
        #expect(!Service(source: legacy, target: current).moved)
        #expect(current.integer(forKey: "index") == 2)
        #expect(indexes.all == [2])
        cancellable.cancel()
    }

    /// Nothing stored at the source (a registered value does not count): nothing moves and
    /// nothing is recorded, so a value stored later still moves.
    @Test func withNothingStoredNothingIsRecorded() {
        let defaults = Defaults(MemoryProvider())
        defaults.register(defaults: ["count": 9.0])
        #expect(!Service(source: defaults).moved)
        #expect(defaults.keys().isEmpty)
        defaults.set(2.0, forKey: "count")
        let service = Service(source: defaults)
        #expect(service.moved)
        #expect(service.index == 1)
    }

    /// Both properties publish their new values when the move happens after they were subscribed.
    @Test func bothPropertiesPublish() {
        let defaults = Defaults(MemoryProvider())
        let service = Service(source: defaults)
        let indexes = Recorder<Int>()
        let cancellable = service.$index.sink { indexes.record($0) }
        service.setLegacy(11)
        #expect(service.migrateAgain())
        #expect(indexes.all == [0, 10])
        #expect(!service.legacyIsSet)
        cancellable.cancel()
    }

    /// A source value that cannot be read is reported and left in place; nothing is recorded.
    @Test func anUnreadableSourceIsReportedAndKept() {
        let errors = ErrorLog()
        let defaults = Defaults(MemoryProvider(["count": "many"]), errorHandler: { errors.record($0) })
        let service = Service(source: defaults)
        #expect(!service.moved)
        #expect(defaults.string(forKey: "count") == "many")
        #expect(!defaults.hasValue(forKey: "AnyDefaults.migrated:count>index"))
        #expect(errors.all.contains { $0.key == "count" && $0.code == .typeMismatch })
    }

    /// Between mocked properties the move happens in memory; a mocked property neither gives to
    /// nor takes from a store.
    @Test func mockedPropertiesMoveInMemoryOnly() {
        let provider = CountingProvider(["count": 4.0])
        let defaults = Defaults(provider, cached: false)
        let untouched = provider.callCount
        let mocked = Service(source: defaults, mock: true)
        #expect(!mocked.moved)  // nothing set in memory
        mocked.setLegacy(6)
        #expect(mocked.migrateAgain())
        #expect(mocked.index == 5)
        #expect(provider.callCount == untouched)

        @PublishedDefault("count", store: defaults) var stored = 1.0
        @PublishedDefault("index", store: defaults) var memory = 0
        _memory.mock = true
        #expect(!$stored.migrate(to: $memory) { Int($0) })
        #expect(defaults.double(forKey: "count") == 4)
        #expect(memory == 0)
    }
}
