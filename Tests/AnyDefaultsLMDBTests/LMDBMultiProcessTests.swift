@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@Suite struct LMDBMultiProcessTests {
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
