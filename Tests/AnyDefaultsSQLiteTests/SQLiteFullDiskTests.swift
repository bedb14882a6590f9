@testable import AnyDefaultsSQLite
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

/// A SQLite store that filled its disk can be shrunk through itself: removing keys works (the
/// store gives up its reserve and truncates its log), and the room they held is reused. On a tmpfs
/// of a few MiB (root only: without it the test fails).
@Suite(.serialized) struct SQLiteFullDiskTests {
    @Test func aStoreThatFilledTheDiskIsShrunkByRemovingKeys() throws {
        let disk = try SmallFileSystem(bytes: 8 << 20)
        let path = disk.path("store.sqlite")
        let store = try SQLiteProvider(path: path)
        #expect(FileManager.default.fileExists(atPath: path + "-reserve"))
        var count = 0
        let full = #expect(throws: DefaultsError.self) {
            while true {
                try store.setValue(.data(Data(repeating: UInt8(count & 0xFF), count: 100_000)), forKey: "k\(count)")
                count += 1
            }
        }
        #expect(full?.code == .storageFull)
        #expect(count > 20)
        // Removing keys works on the full disk; so does the room they freed.
        try store.apply((0..<count / 2).map { .remove("k\($0)") })
        try store.removeValue(forKey: "k\(count / 2)")
        try store.setValue(.data(Data(repeating: 1, count: 100_000)), forKey: "after")
        #expect(try store.value(forKey: "k\(count - 1)") == .data(Data(repeating: UInt8((count - 1) & 0xFF), count: 100_000)))
        store.close()
        let reopened = try SQLiteProvider(path: path)
        #expect(try reopened.keys().count == count - count / 2 - 1 + 1)
        #expect(try reopened.value(forKey: "k0") == nil)
        reopened.close()
    }
}
