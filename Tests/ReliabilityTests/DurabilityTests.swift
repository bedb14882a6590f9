import AnyDefaults
import Foundation
import TestSupport
import Testing

/// The durability a store string asks for reaches the engine: the syncs per committed write,
/// counted by the fault shim (`Tests/FaultInjection/faultshim.c`) in a child process that writes
/// once and then several times (the difference, divided by the extra writes, is what one commit
/// costs; opening and closing the store cancel out). A sync is an `fsync`, an `fdatasync` or a
/// write through a descriptor opened `O_DSYNC` (how LMDB writes its meta page).
@Suite(.ownThreads, .enabled(if: FaultShim.isSupported, "the fault shim interposes glibc through LD_PRELOAD: Linux only"))
struct DurabilityTests {
    struct Level: Sendable, CustomTestStringConvertible {
        var scheme: String
        var options: String
        /// Syncs per committed write (per set-and-remove round with `emptying`).
        var syncs: Int
        /// Why that many.
        var reason: String
        /// Whether each round sets the only key and removes it again (the child's `empties`).
        var emptying = false
        /// Options of another provider on the same store, opened and written first in the same
        /// process (the child's `writes-after`): LMDB shares one environment between them.
        var after: String?
        /// Writes (`write`, `pwrite`, ...) per committed write, where the level promises a number.
        var writes: Int?
        var testDescription: String {
            scheme + ":" + (options.isEmpty ? "" : "?" + options) + (emptying ? ", emptied" : "")
                + (after.map { ", after a provider with ?\($0)" } ?? "")
        }
    }

    static let levels: [Level] = [
        Level(scheme: "json", options: "", syncs: 2, reason: "the new file, then its directory after the rename"),
        Level(scheme: "userdefaults", options: "", syncs: 2, reason: "the new suite file, then the directory after the rename"),
        Level(scheme: "sqlite", options: "", syncs: 0, reason: "synchronous=NORMAL in WAL mode syncs at checkpoints only"),
        Level(scheme: "sqlite", options: "durability=normal", syncs: 0, reason: "synchronous=NORMAL"),
        Level(scheme: "sqlite", options: "durability=full", syncs: 1, reason: "synchronous=FULL syncs the WAL at each commit"),
        Level(scheme: "lmdb", options: "", syncs: 2, reason: "the data pages (fdatasync), then the meta page (O_DSYNC)"),  // portability-check: allowed, a reason, in words
        Level(scheme: "lmdb", options: "durability=synced", syncs: 2, reason: "as the default"),
        Level(scheme: "lmdb", options: "durability=nosync", syncs: 0, reason: "MDB_NOSYNC"),
        Level(
            scheme: "lmdb", options: "durability=mapped", syncs: 0,
            reason: "MDB_WRITEMAP with MDB_NOSYNC: a commit writes the shared map, no write call", writes: 0),
        Level(
            scheme: "lmdb", options: "durability=mapped", syncs: 0,
            reason: "the store was opened without MDB_WRITEMAP in this process: written as nosync", after: "durability=synced"),
        Level(
            scheme: "userdefaults", options: "", syncs: 3,
            reason: "a write (file, directory), then emptying the suite removes its file and syncs the directory", emptying: true),
        Level(scheme: "json", options: "", syncs: 4, reason: "a write, then an empty file written the same way", emptying: true),
        Level(
            scheme: "lmdb", options: "durability=nosync", syncs: 0, reason: "MDB_NOSYNC set for this provider's commits",
            after: "durability=synced"),
    ] + ["json", "sqlite", "lmdb"].map {
        Level(
            scheme: $0, options: "journal=on", syncs: 0,
            reason: "a write is a copy into the journal's shared map; the store gets one batch, whatever the count, when the journal is applied",
            writes: 0)
    } + [
        Level(
            scheme: "lmdb", options: "durability=synced", syncs: 2, reason: "MDB_NOSYNC cleared for this provider's commits",
            after: "durability=nosync"),
    ]

    /// The calls of a child that opens the store and writes `count` times (then, with `durable`,
    /// calls `makeDurable()`).
    ///
    /// With `keptOpen`, this process holds the store open meanwhile: the child's connection is
    /// then not the last, and SQLite does not checkpoint (and sync) when it closes.
    static func calls(
        _ level: Level, writes count: Int, durable: Bool = false, keptOpen: Bool = false, shim: FaultShim, in directory: TemporaryDirectory
    ) throws -> [FaultShim.Call] {
        let base = directory.path("run-\(count)\(durable ? "-durable" : "")")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let store = try TestStore(level.scheme, base: base, forChildren: true)
        let text = store.store + (level.options.isEmpty ? "" : "?" + level.options)
        let log = base + "/shim.log"
        let holder = try keptOpen ? store.open() : nil
        try holder?.setValue(.int(-1), forKey: "opened")
        defer { (holder as? SQLiteProvider)?.close() }
        let result = try ChildProcess.run(
            "TestChild",
            level.after.map { ["writes-after", store.store + "?" + $0, text, String(count)] }
                ?? [level.emptying ? "empties" : "writes", text, String(count)] + (durable ? ["durable"] : []),
            environment: store.environment.merging(shim.environment(watching: base, log: log)) { $1 })
        try #require(result.status == 0, "\(text): \(result.standardError)")
        let calls = FaultShim.calls(inLog: log)
        try #require(!calls.isEmpty, "the shim counted no call for \(text): is it preloaded?")
        return calls
    }

    @Test(arguments: levels)
    func eachCommitSyncsAsItsLevelPromises(_ level: Level) async throws {
        try await BlockingWork.run {
            try withTemporaryDirectory { directory in
                let shim = try FaultShim.build(in: directory.path)
                let onceCalls = try Self.calls(level, writes: 1, shim: shim, in: directory)
                let extra = 4
                let moreCalls = try Self.calls(level, writes: 1 + extra, shim: shim, in: directory)
                let once = onceCalls.filter(\.isSync)
                let more = moreCalls.filter(\.isSync)
                let perCommit = Double(more.count - once.count) / Double(extra)
                #expect(
                    perCommit == Double(level.syncs),
                    "\(level.testDescription): \(perCommit) syncs per commit, expected \(level.syncs) (\(level.reason)); one write: \(once), \(1 + extra) writes: \(more)")
                if let writes = level.writes {
                    let onceWrites = onceCalls.filter { $0.kind == "write" }
                    let moreWrites = moreCalls.filter { $0.kind == "write" }
                    let writesPerCommit = Double(moreWrites.count - onceWrites.count) / Double(extra)
                    #expect(
                        writesPerCommit == Double(writes),
                        "\(level.testDescription): \(writesPerCommit) writes per commit, expected \(writes) (\(level.reason)); one write: \(onceWrites), \(1 + extra) writes: \(moreWrites)")
                }
            }
        }
    }

    /// `makeDurable()` syncs what a lazily synced store committed (what a move calls before it
    /// removes its source), and costs a store that syncs every commit nothing more.
    @Test(arguments: [
        ("sqlite", "", true), ("sqlite", "durability=normal", true), ("lmdb", "durability=nosync", true),
        ("sqlite", "durability=full", true), ("lmdb", "", true), ("json", "", false),
    ])
    func makeDurableSyncsWhatALazyStoreCommitted(scheme: String, options: String, syncsOnce: Bool) async throws {
        try await BlockingWork.run {
            try withTemporaryDirectory { directory in
                let shim = try FaultShim.build(in: directory.path)
                let level = Level(scheme: scheme, options: options, syncs: 0, reason: "")
                // Held open here, SQLite's store is not checkpointed when the child closes it.
                let plain = try Self.calls(level, writes: 3, keptOpen: true, shim: shim, in: directory).filter(\.isSync)
                let durable = try Self.calls(level, writes: 3, durable: true, keptOpen: true, shim: shim, in: directory).filter(\.isSync)
                if syncsOnce {
                    #expect(durable.count > plain.count, "\(scheme):?\(options): \(plain) then \(durable)")
                } else {
                    #expect(durable.count == plain.count, "\(scheme):?\(options): \(plain) then \(durable)")
                }
            }
        }
    }

    /// SQLite's `makeDurable()` while another connection is inside a read transaction (the
    /// `sqlite3` shell after `BEGIN` and a `SELECT`): its checkpoint may copy no page then, and
    /// syncs nothing, so the write-ahead log is synced by itself (what a journal's flush and a
    /// move rely on).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
    func makeDurableSyncsTheLogWhileAReaderHoldsIt() async throws {
        try await BlockingWork.run {
            try withTemporaryDirectory { directory in
                let shim = try FaultShim.build(in: directory.path)
                func syncs(durable: Bool) throws -> Int {
                    let base = directory.path(durable ? "durable" : "plain")
                    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
                    let store = try TestStore("sqlite", base: base, forChildren: true)
                    let holder = try store.open()
                    try holder.setValue(.int(-1), forKey: "opened")
                    // Every page copied to the store: the reader below then pins the log where
                    // the checkpoint already is, and a later checkpoint can copy nothing.
                    try holder.makeDurable()
                    let reader = Process()
                    reader.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
                    reader.arguments = [store.dataFile]
                    let input = Pipe()
                    let output = Pipe()
                    reader.standardInput = input
                    reader.standardOutput = output
                    try reader.run()
                    defer {
                        try? input.fileHandleForWriting.close()
                        reader.terminate()
                        reader.waitUntilExit()
                    }
                    input.fileHandleForWriting.write(Data("BEGIN;\nSELECT count(*) FROM sqlite_master;\nSELECT 'pinned';\n".utf8))
                    var said = ""
                    while !said.contains("pinned") {
                        let chunk = output.fileHandleForReading.availableData
                        guard !chunk.isEmpty else { break }
                        said += String(decoding: chunk, as: UTF8.self)
                    }
                    try #require(said.contains("pinned"), "the sqlite3 shell said \(said)")
                    let log = base + "/shim.log"
                    let result = try ChildProcess.run(
                        "TestChild", ["writes", store.store, "3"] + (durable ? ["durable"] : []),
                        environment: store.environment.merging(shim.environment(watching: base, log: log)) { $1 })
                    try #require(result.status == 0, "\(result.standardError)")
                    withExtendedLifetime(holder) {}
                    return FaultShim.calls(inLog: log).filter(\.isSync).count
                }
                let plain = try syncs(durable: false)
                let durable = try syncs(durable: true)
                #expect(durable > plain, "syncs: \(plain) without makeDurable(), \(durable) with it")
            }
        }
    }
}
