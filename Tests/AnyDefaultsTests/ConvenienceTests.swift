import AnyDefaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// A provider that records each batch it is given, in front of an in-memory store.
final class BatchRecordingProvider: DefaultsProvider {
    let base = MemoryProvider()
    let batches = Recorder<[DefaultsChange]>()
    var capabilities: DefaultsCapabilities { base.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try base.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try base.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        batches.record(changes)
        try base.apply(changes)
    }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation { base.observe(handler) }
}

struct Window: Codable, Hashable, DefaultsCodable { var width: Int }

extension DefaultsKeys {
    static let convenienceVolume = DefaultsKey<Double>("volume", default: 0.5)
    static let convenienceName = DefaultsKey<String?>("name")
    static let convenienceWindow = DefaultsKey<Window>("window", default: Window(width: 800))
}

@Suite struct ConvenienceTests {
    @Test func severalKeysAreResetInOneBatch() throws {
        let provider = BatchRecordingProvider()
        let defaults = Defaults(provider, cached: false)
        defaults[.convenienceVolume] = 0.9
        defaults[.convenienceName] = "ada"
        defaults[.convenienceWindow] = Window(width: 1024)
        #expect(defaults[.convenienceWindow].width == 1024)            // decoded and kept
        let before = provider.batches.all.count

        defaults.reset(.convenienceVolume, .convenienceName, .convenienceWindow)

        #expect(provider.batches.all.count == before + 1)
        #expect(provider.batches.all.last == [.remove("volume"), .remove("name"), .remove("window")])
        #expect(defaults[.convenienceVolume] == 0.5)
        #expect(defaults[.convenienceName] == nil)
        #expect(defaults[.convenienceWindow] == Window(width: 800))     // not the decoded value kept before
        #expect(defaults.keys().isEmpty)
    }

    @Test func resetInAScopeAndByArrayAndThrowing() throws {
        let defaults = Defaults(MemoryProvider(["ui.volume": 0.1, "ui.name": "x", "volume": 0.2]))
        let ui = defaults.scoped("ui.")
        ui.reset([.convenienceVolume, .convenienceName])
        #expect(defaults.keys() == ["volume"])
        try defaults.throwing.reset(.convenienceVolume)
        try defaults.throwing.reset(.convenienceVolume, .convenienceName)    // absent keys: no error
        try defaults.throwing.reset([])
        #expect(defaults.keys().isEmpty)
        let refused = Recorder<DefaultsError.Code>()
        let empty = DefaultsKey<Int>("", default: 0)
        let reporting = Defaults(MemoryProvider(["volume": 0.3]), errorHandler: { refused.record($0.code) })
        reporting.reset(.convenienceVolume, empty)                         // a bad key: the whole batch is refused
        #expect(refused.all == [.invalidKey])
        #expect(reporting[.convenienceVolume] == 0.3)
    }

    @Test func valuesWithoutTheInitialValueStartAtTheFirstChange() async throws {
        let defaults = Defaults(MemoryProvider(["volume": 0.3]))
        var withInitial = defaults.values(of: .convenienceVolume, initial: true).makeAsyncIterator()
        var changesOnly = defaults.values(of: .convenienceVolume, initial: false).makeAsyncIterator()
        #expect(await withInitial.next() == 0.3)
        defaults[.convenienceVolume] = 0.4
        defaults.reset(.convenienceVolume)
        #expect(await changesOnly.next() == 0.4)
        #expect(await changesOnly.next() == 0.5)                       // a removal reads as the default

        let property = Default(.convenienceVolume, store: defaults)
        var fromProperty = property.values(initial: false).makeAsyncIterator()
        property.wrappedValue = 0.7
        #expect(await fromProperty.next() == 0.7)
    }

    @Test func aComputedDefaultIsComputedAtEachReadAndNeverStored() throws {
        let calls = Mutex(0)
        let started = DefaultsKey<Int>("started") { calls.withLock { $0 += 1; return $0 } }
        let defaults = Defaults(MemoryProvider())
        #expect(defaults[started] == 1)
        #expect(defaults[started] == 2)                                // again at the next read
        #expect(Default(started, store: defaults).wrappedValue == 3)
        #expect(defaults.keys().isEmpty)
        defaults[started] = 40
        #expect(defaults[started] == 40)
        #expect(calls.withLock { $0 } == 3)                             // not called while a value is stored
        defaults.reset(started)
        #expect(defaults[started] == 4)
        defaults.register(defaults: ["started": 10])
        #expect(defaults[started] == 10)                               // a registered default comes first
        #expect(try defaults.throwing.value(for: started) == 10)

        let dated = DefaultsKey<Date>("dated") { Date() }
        let first = defaults[dated]
        Thread.sleep(forTimeInterval: 0.01)
        #expect(defaults[dated] > first)
    }
}
