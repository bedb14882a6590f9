@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

/// A full disk never ends in a signal: LMDB maps its lock file and would touch pages the file
/// system cannot allocate (SIGBUS), and reported a write cut short by a full disk as EIO. Each case
/// runs in a child process (a signal would end it, not the tests), on a tmpfs of a few MiB (root
/// only: without it the tests fail).
@Suite(.serialized) struct LMDBFullDiskTests {
    /// Each case also with `durability=mapped`, whose commits write the map in place: a page of a
    /// sparse file dirtied on a full disk would be SIGBUS there, so its map's space is reserved.
    static let options = ["", "?durability=mapped"]

    @Test(arguments: options)
    func creatingAStoreOnAFullDiskIsStorageFullNotASignal(options: String) throws {
        let disk = try SmallFileSystem(bytes: 1 << 20)
        disk.fill()
        #expect(disk.available == 0)
        let result = try ChildProcess.run("TestChild", ["open", "lmdb:" + disk.path("store") + options])
        #expect(!result.wasSignaled, "died of signal \(result.status)")
        #expect(result.standardOutput.hasPrefix("error storageFull"), "\(result.standardOutput) \(result.standardError)")
        // With room again, the store opens and works.
        try FileManager.default.removeItem(atPath: disk.path("filler"))
        // (A mapped store reserves its whole map on disk: 64 KiB fits this 1 MiB disk, 4 MiB not.)
        let store = try LMDBProvider(
            path: disk.path("store"), options: .init(initialMapSize: 64 << 10, durability: options.isEmpty ? .synced : .mapped))
        try store.setValue(.int(1), forKey: "k")
        #expect(try store.value(forKey: "k") == .int(1))
        store.close()
    }

    @Test(arguments: options)
    func fillingTheDiskIsStorageFullAndKeepsEveryValueWritten(options: String) throws {
        let disk = try SmallFileSystem(bytes: 4 << 20)
        let result = try ChildProcess.run(
            "TestChild", ["fill", "lmdb:" + disk.path("store") + "?mapsize=64KiB" + options.replacingOccurrences(of: "?", with: "&")])
        #expect(!result.wasSignaled, "died of signal \(result.status)")
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.first?.hasSuffix(" storageFull") == true, "\(result.standardOutput) \(result.standardError)")
        #expect(lines.contains { $0.hasPrefix("kept ") }, "\(result.standardOutput) \(result.standardError)")
        #expect(result.status == 0)
    }
}
