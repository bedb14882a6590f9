import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// `removeValueIfPresent(forKey:)` says whether the key held a value, atomically, on every
/// built-in backend, plain and cached; the default for third-party providers is correct alone.
@Suite struct RemoveValueIfPresentTests {
    @Test(arguments: EveryBackend.variants)
    func reportsPresenceOnceAndRemoves(store: String) throws {
        try EveryBackend.with(store) { open in
            let provider = try open()
            let log = EventLog(provider)
            try provider.setValue(.string("v"), forKey: "caf\u{E9}")
            #expect(try provider.removeValueIfPresent(forKey: "cafe\u{301}"))  // the canonical twin
            #expect(try provider.value(forKey: "caf\u{E9}") == nil)
            #expect(try !provider.removeValueIfPresent(forKey: "caf\u{E9}"))
            #expect(try !provider.removeValueIfPresent(forKey: "never.written"))
            let removals = log.settled(at: 2).filter { $0.newValue == nil }
            #expect(removals.map(\.key) == ["caf\u{E9}"], "one event for the one removal: \(removals)")
            let error = #expect(throws: DefaultsError.self) { try provider.removeValueIfPresent(forKey: "") }
            #expect(error?.code == .invalidKey && error?.kind == .callerFault)
        }
    }

    /// Threads on two instances of one store (two connections, two file handles) race to remove
    /// the same key, round after round: exactly one is told it was there each time.
    @Test(arguments: EveryBackend.shared)
    func exactlyOneOfManyConcurrentRemoversIsToldTheKeyWasThere(store: String) throws {
        try EveryBackend.with(store) { open in
            let instances = [try open(), try open()]
            let rounds = 40
            for round in 0..<rounds {
                let key = "race.\(round)"
                try instances[0].setValue(.int(Int64(round)), forKey: key)
                let told = Atomic<Int>(0)
                let failures = Mutex<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 6) { index in
                    do {
                        if try instances[index % 2].removeValueIfPresent(forKey: key) { told.add(1, ordering: .relaxed) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                #expect(failures.withLock { $0 }.isEmpty)
                #expect(told.load(ordering: .relaxed) == 1, "round \(round): \(told.load(ordering: .relaxed)) removers were told")
            }
        }
    }

    /// A provider that only has the required members gets a working default.
    @Test func theDefaultImplementationReadsThenRemoves() throws {
        let minimal = MinimalProvider()
        try minimal.setValue(.int(1), forKey: "k")
        #expect(try minimal.removeValueIfPresent(forKey: "k"))
        #expect(try !minimal.removeValueIfPresent(forKey: "k"))
        #expect(try minimal.keys().isEmpty)
    }

    @Test func theFacadeReportsPresenceWithinItsScope() throws {
        let defaults = Defaults(MemoryProvider())
        let tenant = defaults.scoped("tenant/acme/")
        tenant.set(1, forKey: "plan")
        #expect(try tenant.throwing.removeValueIfPresent(forKey: "plan"))
        #expect(try !tenant.throwing.removeValueIfPresent(forKey: "plan"))
        #expect(defaults.keys().isEmpty)
    }
}

/// A third-party provider as written before the members with default implementations existed.
final class MinimalProvider: DefaultsProvider {
    private let values = Mutex<[String: DefaultsValue]>([:])
    private let broadcaster = ChangeBroadcaster()

    var capabilities: DefaultsCapabilities { [.atomicBatch] }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        let key = try DefaultsValidation.canonicalKey(key, backend: "Minimal")
        return values.withLock { $0[key] }
    }

    func keys() throws(DefaultsError) -> [String] { values.withLock { Array($0.keys) } }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        let changes = try DefaultsValidation.canonicalChanges(changes, backend: "Minimal")
        values.withLock { values in
            for change in changes where values[change.key] != change.value {
                values[change.key] = change.value
                broadcaster.enqueue(DefaultsChangeEvent(key: change.key, newValue: change.value))
            }
        }
        broadcaster.deliverPending()
    }

    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        broadcaster.observe(handler)
    }
}
