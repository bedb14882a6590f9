@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@Suite(.ownThreads) struct LMDBMultiProcessTests {
    @Test func concurrentProcessesLoseNoUpdate() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let store = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10))
            let perProcess = 40
            let children = try (0..<4).map { try ChildProcess.start("TestChild", ["write", "lmdb:" + path, "child\($0)", String(perProcess)]) }
            // This process writes too, at the same time.
            for index in 0..<perProcess { try store.setValue(.int(Int64(index)), forKey: "parent-\(index)") }
            for (child, output, error) in children {
                child.waitUntilExit()
                let message = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    + String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(child.terminationStatus == 0, "\(message)")
            }
            let expected = Set((0..<4).flatMap { child in (0..<perProcess).map { "child\(child).\($0)" } }
                + (0..<perProcess).map { "parent-\($0)" })
            #expect(Set(try store.keys()) == expected)
            for child in 0..<4 {
                #expect(try store.value(forKey: "child\(child).\(perProcess - 1)") == .int(Int64(perProcess - 1)))
            }
        }
    }

    /// A process killed inside a read transaction leaves its reader slot in the lock file, and the
    /// slot pins that snapshot: no commit may reuse a page freed after it. A store already open
    /// never looked for dead readers again, so its map grew with every overwrite, up to its
    /// maximum (the LMDB stress test once ended in `storageFull` at 1 GiB). A full map now frees
    /// such slots before it grows: 40 overwrites of 100 KB fit in a map of 1 MiB.
    @Test func aReaderKilledInsideATransactionDoesNotPinTheMap() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let store = try LMDBProvider(
                path: path, options: .init(initialMapSize: 512 << 10, maximumMapSize: 1 << 20, durability: .noSync))
            defer { store.close() }
            try store.setValue(.data(Data(repeating: 0, count: 100_000)), forKey: "blob")

            let (reader, output, _) = try ChildProcess.start("TestChild", ["hold-reader", path])
            var said = Data()
            while !said.contains(0x0A) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                said.append(chunk)
            }
            #expect(String(decoding: said, as: UTF8.self).hasPrefix("reading"))
            kill(reader.processIdentifier, SIGKILL)
            reader.waitUntilExit()

            for round in 1...40 {
                try store.setValue(.data(Data(repeating: UInt8(round), count: 100_000)), forKey: "blob")
            }
            #expect(try store.value(forKey: "blob") == .data(Data(repeating: 40, count: 100_000)))
        }
    }

    @Test func noSyncWriteSurvivesTheProcessDying() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            let child = try ChildProcess.run("TestChild", ["crash", "lmdb:" + path + "?durability=nosync", "theme:string=dark"])
            #expect(child.wasSignaled, "\(child.standardOutput) \(child.standardError)")
            // The dead process's reader slot and lock are cleared at open; its commit is there.
            let store = try LMDBProvider(path: path)
            #expect(try store.value(forKey: "theme") == .string("dark"))
            try store.setValue(.string("light"), forKey: "theme")
            #expect(try store.value(forKey: "theme") == .string("light"))
        }
    }
}
