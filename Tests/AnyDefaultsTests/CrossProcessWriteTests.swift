import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// Last writer wins across processes, with the default cache in front: a write of the value this
/// process last saw, made after another process replaced it, is never skipped as "already
/// stored". (The cache once skipped it on the JSON file and `UserDefaults` backends, whose other
/// processes' writes it hears of only through their watch, a moment later or never.)
@Suite(.ownThreads) struct CrossProcessWriteTests {
    static let stores = EveryBackend.stores.filter { !$0.hasPrefix("memory:") }
        .map { $0.hasPrefix("json:") ? $0 + "?watch=off" : $0 }

    @Test(arguments: stores)
    func aWriteOfWhatThisProcessLastSawOutlastsAnotherProcesssEarlierWrite(_ template: String) async throws {
        try await EveryBackend.with(template) { (text: String) in
            let store = try ProviderRegistry.standard.makeProvider(text)
            #expect(store.capabilities.contains(.multiProcess))
            for round in 0..<3 {
                try store.setValue(.string("mine"), forKey: "flag")
                #expect(try store.value(forKey: "flag") == .string("mine"))
                let result = try ChildProcess.run("TestChild", ["apply", text, "flag=\(round)"])
                try #require(result.status == 0, "\(result.standardError)")
                // From synchronous code, a batch, and async code: each path decides the same way.
                switch round {
                case 0: try store.setValue(.string("mine"), forKey: "flag")
                case 1: try store.apply([.set("flag", .string("mine"))])
                default: try await store.setValueAsync(.string("mine"), forKey: "flag")
                }
                // Read by another process: an instance here could share this one's copy in memory.
                let read = try ChildProcess.run("TestChild", ["get", text, "flag"])
                try #require(read.status == 0, "\(read.standardError)")
                #expect(read.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "\(DefaultsValue.string("mine"))",
                    "round \(round): the other process's write outlasted this later one")
            }
        }
    }

    /// Another process writes a payload, then a key saying it is ready, 100 times; this one, on
    /// each "ready" event, reads the payload through the default cache: never older than the
    /// round it was told of (the cache once answered with the payload it held before, on the
    /// JSON file and `UserDefaults` backends, whose watch reports a re-read's changes one by one).
    @Test(arguments: EveryBackend.stores.filter { !$0.hasPrefix("memory:") })
    func aReadAfterAnotherProcessesEventIsNeverOlderThanTheEvent(_ template: String) async throws {
        try await EveryBackend.with(template) { (text: String) in
            let store = try ProviderRegistry.standard.makeProvider(text)
            try store.apply([.set("z.payload", .int(0)), .set("a.ready", .int(0))])
            #expect(try store.value(forKey: "z.payload") == .int(0))
            let rounds: Int64 = 100
            let stale = Mutex<[String]>([])
            let last = Mutex<Int64>(0)
            let observation = store.observe { event in
                guard event.key == "a.ready", case .int(let round)? = event.newValue else { return }
                let payload = try? store.value(forKey: "z.payload")
                if case .int(let seen)? = payload, seen >= round {} else {
                    stale.withLock { $0.append("ready \(round), payload \(String(describing: payload))") }
                }
                last.withLock { $0 = max($0, round) }
            }
            defer { observation.cancel() }
            let writes = (1...rounds).flatMap { ["z.payload=\($0)", "a.ready=\($0)"] }
            let result = try ChildProcess.run("TestChild", ["apply", text] + writes)
            try #require(result.status == 0, "\(result.standardError)")
            #expect(waitUntil { last.withLock { $0 } == rounds }, "the last round was never reported")
            #expect(stale.withLock { $0 }.isEmpty, "\(stale.withLock { $0 })")
        }
    }
}
