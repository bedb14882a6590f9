import AnyDefaultsCore
import TestSupport
import Testing

/// The observers of every instance on one store: who hears what, with which origin, and the
/// differences between two versions of a store, which the file backends report when a file changes
/// under them.
@Suite struct InstanceListenersTests {
    /// Collects what a broadcaster delivers.
    final class Heard: Sendable {
        let recorder = Recorder<DefaultsChangeEvent>()
        let observation: DefaultsObservation
        init(_ broadcaster: ChangeBroadcaster) {
            let recorder = recorder
            observation = broadcaster.observe { recorder.record($0) }
        }
        var all: [DefaultsChangeEvent] { recorder.all }
    }

    @Test func theWriterHearsItsChangesAsLocalAndTheOthersAsExternal() {
        let listeners = InstanceListeners()
        let (a, b, c) = (ChangeBroadcaster(), ChangeBroadcaster(), ChangeBroadcaster())
        let (heardA, heardB) = (Heard(a), Heard(b))
        let idA = listeners.register(a)
        _ = listeners.register(b)
        _ = listeners.register(c)  // no observer: nothing is queued for it
        #expect(listeners.hasObservers)

        let outside = [DefaultsChangeEvent(key: "x", newValue: .int(1), origin: .local)]
        let mine = [DefaultsChangeEvent(key: "k", newValue: .string("v"))]
        let broadcasters = listeners.enqueue(mine, from: idA, after: outside)
        #expect(broadcasters.count == 3)
        listeners.deliverPending()

        #expect(heardA.all.map(\.key) == ["x", "k"])
        #expect(heardA.all.map(\.origin) == [.external, .local])
        #expect(heardB.all.map(\.key) == ["x", "k"])
        #expect(heardB.all.map(\.origin) == [.external, .external])
        #expect(heardB.all.last?.newValue == .string("v"))
    }

    @Test func nothingIsQueuedWithoutEventsOrAfterUnregistering() {
        let listeners = InstanceListeners()
        let broadcaster = ChangeBroadcaster()
        let heard = Heard(broadcaster)
        let id = listeners.register(broadcaster)
        #expect(listeners.enqueue([], from: nil).isEmpty)
        listeners.unregister(id)
        #expect(!listeners.hasObservers)
        #expect(listeners.enqueue([DefaultsChangeEvent(key: "k", newValue: nil)], from: nil).isEmpty)
        listeners.deliverPending()
        broadcaster.deliverPending()
        #expect(heard.all.isEmpty)
    }

    /// Against a reference computed the slow way, over generated pairs of stores whose keys sort
    /// differently by UTF-8 bytes and by `String` order.
    @Test(arguments: [UInt64(7), 41, 2026])
    func differencesAreEveryChangedKeyOnceInUTF8Order(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let keys = ["a", "B", "é", "e\u{301}x", "z", "\u{FF5E}", "\u{1F600}", "k.1", "k.10", "k.2"]
        let values: [DefaultsValue?] = [nil, .int(1), .int(2), .double(-0.0), .double(0.0), .string("1")]
        for _ in 0..<200 {
            var old: [String: DefaultsValue] = [:]
            var new: [String: DefaultsValue] = [:]
            for key in keys {
                old[key] = values[Int(generator.next() % UInt64(values.count))]
                new[key] = values[Int(generator.next() % UInt64(values.count))]
            }
            let events = DefaultsChangeEvent.differences(from: old, to: new)
            let expected = keys.filter { old[$0] != new[$0] }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            #expect(events.map(\.key) == expected, "seed \(seed)")
            #expect(events.allSatisfy { $0.newValue == new[$0.key] && $0.origin == .external }, "seed \(seed)")
        }
    }
}
