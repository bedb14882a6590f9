import AnyDefaultsCore
import AnyDefaultsSQLite
import Foundation
import Testing
import TestSupport

@Suite struct SQLiteMultiProcessTests {
    /// A connection killed while it holds the write lock keeps it until the kernel has closed its
    /// files, which can take seconds under load (see `FileLockHolder`). A waiting writer waits for
    /// that exit past its busy timeout instead of failing with `busy`; a stopped holder still makes
    /// it give up at the timeout. The timeout is zero, so that the exit always outlasts it.
    @Test func aWriterWaitsPastItsTimeoutForAKilledHolderToExit() throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            let path = directory.path("store.sqlite")
            try SQLiteProvider(path: path).setValue(.int(0), forKey: "k")
            let holding = { StoppedWriter.holdsWriteLock(scheme: "sqlite", location: path) }
            guard let holder = try StoppedWriter(store: "sqlite:" + path, isHeld: holding) else {
                Issue.record("The child was never stopped while it held the write lock.")
                return
            }
            defer { holder.end() }
            let store = try SQLiteProvider(path: path, busyTimeout: .zero)
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

    @Test func concurrentProcessesLoseNoUpdateAndNeverReportLocked() throws {
        try withTemporaryDirectory { directory in
            // The file does not exist yet: the children also race to create it.
            let path = directory.path("shared.sqlite")
            let writers = 4
            let count = 150
            // Half write key by key, half in observed batches (transactions that read, then write).
            let children = try (0..<writers).map { writer in
                try ChildProcess.start(
                    "TestChild", [writer.isMultiple(of: 2) ? "write" : "batch", "sqlite:" + path, "p\(writer)", "\(count)"])
            }
            // Writes from this process too, at the same time.
            let store = try SQLiteProvider(path: path)
            for index in 0..<count {
                try store.setValue(.int(Int64(index)), forKey: "parent.\(index)")
            }
            for (process, output, error) in children {
                let errorText = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                _ = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "\(errorText)")
                #expect(!errorText.contains("locked"), "\(errorText)")
            }
            let values = try store.allValues()
            #expect(values.count == (writers + 1) * count)
            for writer in 0..<writers {
                for index in 0..<count {
                    #expect(values["p\(writer).\(index)"] == .int(Int64(index)), "p\(writer).\(index)")
                }
            }
        }
    }

    @Test func anotherProcessReadsWhatThisOneWrote() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("shared.sqlite")
            let store = try SQLiteProvider(path: path)
            try store.setValue(.string("from the parent"), forKey: "greeting")
            let result = try ChildProcess.run("TestChild", ["get", "sqlite:" + path, "greeting"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("from the parent"))

            let write = try ChildProcess.run("TestChild", ["write", "sqlite:" + path, "child", "3"])
            #expect(write.status == 0, "\(write.standardError)")
            #expect(try store.value(forKey: "child.2") == .int(2))
        }
    }
}
