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

    /// A writer killed while it holds the write lock keeps it until the kernel has closed its
    /// files, which can take seconds under load (on Linux, releasing the inotify instance of a
    /// process that watches waits for an RCU grace period, and runs before the directory's lock is
    /// released). A waiting writer waits for that exit past its timeout instead of failing with
    /// `busy` (as three processes of `LMDBStressTests` once did); a stopped holder still makes it
    /// give up at the timeout. The timeout is zero, so that the exit always outlasts it.
    @Test func aWriterWaitsPastItsTimeoutForAKilledHolderToExit() throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            try LMDBProvider(path: path).close()
            let holding = { StoppedWriter.holdsWriteLock(scheme: "lmdb", location: path) }
            guard let holder = try StoppedWriter(store: "lmdb:" + path + "?durability=nosync", isHeld: holding) else {
                Issue.record("The child was never stopped while it held the write lock.")
                return
            }
            defer { holder.end() }
            let store = try LMDBProvider(path: path, options: .init(durability: .noSync, lockTimeout: .zero))
            defer { store.close() }
            // Stopped, it is not waited for.
            let error = #expect(throws: DefaultsError.self) { try store.setValue(.int(1), forKey: "k") }
            #expect(error?.code == .busy)

            // Killed, it holds the lock until its exit is through: the write waits for that.
            kill(holder.process.processIdentifier, SIGKILL)
            #expect(throws: Never.self) { try store.setValue(.int(2), forKey: "k") }
            #expect(try store.value(forKey: "k") == .int(2))
        }
        #endif
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
