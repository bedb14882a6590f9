import AnyDefaults
import Foundation
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
}
