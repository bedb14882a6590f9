import AnyDefaultsCore
import AnyDefaultsSQLite
import Foundation
import Testing
import TestSupport

@Suite(.ownThreads) struct SQLiteMultiProcessTests {
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
