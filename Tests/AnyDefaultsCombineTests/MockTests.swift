import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// A mocked `@PublishedDefault` lives in memory and never touches its store. (The process-wide
/// flag, `PublishedDefaultConfiguration.mock`, is tested in a child process, where setting it
/// cannot disturb the tests running beside it: see `ChildProcessTests`.)
@Suite struct MockTests {
    @Test(arguments: [PublishedDefaultBehavior.didSet, .willSet])
    func aMockedPropertyKeepsItsValueInMemoryAndNeverTouchesTheStore(_ behavior: PublishedDefaultBehavior) {
        let provider = CountingProvider(["volume": 0.1])
        let defaults = Defaults(provider, cached: false)
        let untouched = provider.callCount
        let model = AudioModel(store: defaults, behavior: behavior, mock: true)
        #expect(model.volume == 0.5)  // the default: the stored 0.1 is never read
        let seen = Recorder<String>()
        let cancellable = model.$volume.sink { seen.record("\($0) \(model.volume)") }
        let changes = Recorder<Double>()
        let objectChanges = model.objectWillChange.sink { changes.record(model.volume) }
        model.volume = 0.9
        #expect(model.$volume.isSet)
        model.$volume.reset()
        #expect(!model.$volume.isSet)
        model.volume = 0.2
        model.theme = .dark
        #expect(provider.callCount == untouched, "the store was touched")

        let published = behavior == .didSet
            ? ["0.5 0.5", "0.9 0.9", "0.5 0.5", "0.2 0.2"]
            : ["0.5 0.5", "0.9 0.5", "0.5 0.9", "0.2 0.5"]
        #expect(seen.all == published)
        #expect(changes.all == [0.5, 0.9, 0.5, 0.2])  // objectWillChange before each change
        #expect(defaults[.volume] == 0.1)  // (this read is the first access to the store)
        cancellable.cancel()
        objectChanges.cancel()
    }

    /// A property in a function body, mocked through its own flag before its first use.
    @Test func theFlagIsSetBeforeTheFirstUse() {
        let provider = CountingProvider()
        let defaults = Defaults(provider, cached: false)
        let untouched = provider.callCount
        @PublishedDefault(.count, store: defaults) var count
        #expect(!_count.mock)
        _count.mock = true
        #expect(_count.mock)
        count = 4
        count += 1
        #expect(count == 5)
        #expect(provider.callCount == untouched)

        // A property first used unmocked stays on its store.
        @PublishedDefault(.count, store: defaults) var stored
        stored = 7
        _stored.mock = true
        #expect(!_stored.mock)
        #expect(stored == 7)
        #expect(defaults[.count] == 7)
    }

    /// Two mocked properties are independent of each other and of the store.
    @Test func mockedPropertiesShareNothing() {
        let defaults = Defaults(CountingProvider())
        let first = AudioModel(store: defaults, mock: true)
        let second = AudioModel(store: defaults, mock: true)
        first.volume = 0.9
        #expect(second.volume == 0.5)
        #expect(defaults[.volume] == 0.5)
    }
}
