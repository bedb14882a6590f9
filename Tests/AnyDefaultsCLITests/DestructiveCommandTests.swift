import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Commands that delete or overwrite: they never delete what they did not write, never take an
/// empty prefix for "everything", and never write their output onto the store they read.
@Suite(.ownThreads) struct DestructiveCommandTests {
    // MARK: bench

    /// Another process writes to the stores while `bench` runs on them: its keys survive, and
    /// bench leaves none of its own. On a loaded machine bench can end before the other process
    /// has reached every store: then the run proves nothing, and it runs again, four times longer.
    @Test func benchRemovesOnlyItsOwnKeys() throws {
        var ops = 4_000
        for attempt in 1...3 {
            let reachedEveryStore = try withTemporaryDirectory { directory in
                let cli = try CLI(directory)
                let stores = StoreKind.persistent.map { $0.store(cli, "bench") }
                let running = try cli.start(["bench", "--stores", stores.joined(separator: ","), "--keys", "20", "--ops", "\(ops)"])
                // Once bench has written to each store, another process writes a key of its own there.
                var written: Set<String> = []
                let deadline = ContinuousClock.now + .seconds(120)
                while written.count < stores.count, running.process.isRunning, ContinuousClock.now < deadline {
                    for store in stores where !written.contains(store) {
                        let keys = try cli.run(["--store", store, "keys"]).standardOutput
                        guard keys.contains("bench.key.") else { continue }
                        try cli.succeed(["--store", store, "write", "other.process", "mine"])
                        written.insert(store)
                    }
                    usleep(20_000)
                }
                let errors = running.finish(timeout: .seconds(300))
                #expect(running.process.terminationStatus == 0, "\(errors)")
                for store in stores where written.contains(store) {
                    #expect(try cli.contents(of: store) == ["other.process": .string("mine")], "\(store)")
                }
                return written.count == stores.count
            }
            if reachedEveryStore { return }
            if attempt == 3 { Issue.record("bench (\(ops) operations) ended before the other process could write to every store") }
            ops *= 4
        }
    }

    // MARK: delete --prefix

    @Test(arguments: StoreKind.persistent)
    func anEmptyPrefixIsAUsageErrorNotEverything(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind.store(cli)
            try cli.fill(store, with: sampleValues)
            for arguments in [["delete", "--prefix", ""], ["delete", "--prefix="]] {
                let result = try cli.run(["--store", store] + arguments)
                #expect(result.status == 64, "\(arguments): \(result.standardError)")
                #expect(result.standardError.contains("--all"))
                #expect(try cli.contents(of: store) == sampleValues)
            }
            try cli.succeed(["--store", store, "delete", "--prefix", "ui."])
            #expect(try cli.contents(of: store) == sampleValues.filter { !$0.key.hasPrefix("ui.") })
        }
    }

    // MARK: export onto the store

    /// One way to name a file of the store as the output of its own export.
    struct OwnFile: Sendable, CustomTestStringConvertible {
        var kind: StoreKind
        var file: Int
        var spelling: String

        var testDescription: String { "\(kind.scheme): file \(file) by \(spelling)" }

        static let spellings = ["itself", "a symbolic link", "a hard link", "..", "a relative path"]

        static var all: [OwnFile] {
            StoreKind.persistent.flatMap { kind in
                (0..<(kind.scheme == "sqlite" ? 6 : kind.scheme == "lmdb" ? 3 : kind.scheme == "userdefaults" ? 1 : 2)).flatMap { file in
                    spellings.map { OwnFile(kind: kind, file: file, spelling: $0) }
                }
            }
        }

        /// The output path, made in the sandbox; `nil` where the spelling needs a file that does
        /// not exist (a hard link to a journal not created).
        func output(_ cli: CLI) throws -> String? {
            let target = kind.files(cli)[file]
            switch spelling {
            case "a symbolic link":
                try FileManager.default.createSymbolicLink(atPath: cli.path("link"), withDestinationPath: target)
                return cli.path("link")
            case "a hard link":
                guard FileManager.default.fileExists(atPath: target) else { return nil }
                try FileManager.default.linkItem(atPath: target, toPath: cli.path("hard"))
                return cli.path("hard")
            case "..":
                let folder = (target as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
                return folder + "/sub/../" + (target as NSString).lastPathComponent
            case "a relative path":
                return relativePath(to: target)
            default:
                return target
            }
        }
    }

    @Test(arguments: OwnFile.all)
    func anExportOntoAFileOfItsOwnStoreIsRefused(_ own: OwnFile) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = own.kind.store(cli)
            try cli.fill(store, with: sampleValues)
            guard let output = try own.output(cli) else { return }
            let before = FileManager.default.contents(atPath: own.kind.dataFile(cli))
            for format in ["json", "plist"] {
                let result = try cli.run(["--store", store, "export", "--format", format, "--output", output])
                #expect(result.status == 64, "\(output): \(result.standardError)")
                #expect(result.standardError.contains("a file of the store being exported"), "\(result.standardError)")
            }
            #expect(FileManager.default.contents(atPath: own.kind.dataFile(cli)) == before)
            #expect(try cli.contents(of: store) == sampleValues)
            // Another file beside it is fine.
            try cli.succeed(["--store", store, "export", "--output", cli.path("elsewhere.json")])
            #expect(try ExactJSON.store(from: Data(contentsOf: URL(fileURLWithPath: cli.path("elsewhere.json")))) == sampleValues)
        }
    }
}
