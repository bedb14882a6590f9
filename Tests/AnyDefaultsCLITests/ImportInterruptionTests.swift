import AnyDefaults
import Foundation
import TestSupport
import Testing

/// An import is one atomic batch: an `import` killed with SIGKILL at any moment leaves the store
/// as it was or holding the whole import, on every backend with atomic batches.
@Suite(.ownThreads) struct ImportInterruptionTests {
    static let old = Dictionary(uniqueKeysWithValues: (0..<50).map { ("old.\($0)", DefaultsValue.string("old value \($0)")) })
    static let new = Dictionary(uniqueKeysWithValues: (0..<10_000).map {
        ("key.\($0)", DefaultsValue.string(String(repeating: "settings ", count: 20) + "\($0)"))
    })

    /// A store, read and reset between runs: directly in its file where the format is simple
    /// (no process has it open then), through `anydefaults` otherwise.
    struct StoreUnderTest {
        var store: String
        var path: String?
        var encode: ([String: DefaultsValue]) -> Data = { _ in Data() }
        var decode: (Data) throws -> [String: DefaultsValue] = { _ in [:] }
        let cli: CLI

        init(_ scheme: String, _ cli: CLI) {
            self.cli = cli
            switch scheme {
            case "json":
                store = cli.json()
                path = cli.path("store.json")
                encode = ExactJSON.data(from:)
                decode = { try ExactJSON.store(from: $0) }
            case "userdefaults":
                store = cli.suite("com.example.import")
                path = cli.path("config/com.example.import.plist")
                encode = ExactPropertyList.data(from:)
                decode = { try ExactPropertyList.store(from: $0) }
            default:
                store = "\(scheme):" + cli.path("store.\(scheme)")
            }
        }

        func reset(to values: [String: DefaultsValue]) throws {
            guard let path else { return try cli.fill(store, with: values) }
            try encode(values).write(to: URL(fileURLWithPath: path), options: .atomic)
        }

        func read() throws -> [String: DefaultsValue] {
            guard let path else { return try cli.contents(of: store) }
            return try decode(Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }

    @Test(arguments: ["json", "userdefaults", "sqlite", "lmdb"])
    func aKilledImportLeavesTheOldStoreOrTheWholeImport(_ scheme: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let file = StoreUnderTest(scheme, cli)
            let input = cli.path("large.json")
            try ExactJSON.data(from: Self.new).write(to: URL(fileURLWithPath: input))

            // How long a whole import takes here, to kill the others at points across it.
            try file.reset(to: Self.old)
            let clock = ContinuousClock()
            let started = clock.now
            try cli.succeed(["--store", file.store, "import", "--replace", input])
            let whole = clock.now - started
            #expect(try file.read() == Self.new)
            #expect(try cli.contents(of: file.store) == Self.new)

            var killed = 0
            var duration = Double(whole.components.seconds) + Double(whole.components.attoseconds) / 1e18
            var fractions = [0.4, 0.6, 0.75, 0.85, 0.95]
            var tries = 0
            while !fractions.isEmpty, tries < 12 {
                let fraction = fractions.removeFirst()
                tries += 1
                try file.reset(to: Self.old)
                let running = try cli.start(["--store", file.store, "import", "--replace", input])
                Thread.sleep(forTimeInterval: duration * fraction)
                kill(running.process.processIdentifier, SIGKILL)
                _ = running.finish()
                if running.process.terminationReason == .uncaughtSignal {
                    killed += 1
                } else if killed == 0, fractions.isEmpty {
                    // Every import so far ended before its kill: the first, timed one ran on a busier
                    // machine. Aim at earlier points of a shorter import.
                    duration /= 2
                    fractions = [0.4, 0.75]
                }
                let after = try file.read()
                #expect(after == Self.old || after == Self.new, "killed at \(fraction) of an import: the store holds \(after.count) keys")
            }
            #expect(killed > 0, "every import ended before it was killed")
            // The store is still usable after the kills.
            try cli.succeed(["--store", file.store, "write", "after", "kill"])
        }
    }
}
