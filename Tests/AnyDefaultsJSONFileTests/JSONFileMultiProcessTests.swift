@testable import AnyDefaultsJSONFile
import AnyDefaultsCore
import Foundation
import TestSupport
import Testing

/// Real child processes (TestChild) on one file.
@Suite(.ownThreads) struct JSONFileMultiProcessTests {
    @Test func processesWritingAtOnceLoseNoUpdate() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            try store.setValue(.string("parent"), forKey: "owner")
            let children = try (0..<4).map { child in
                try ChildProcess.start("TestChild", ["write", "json:" + path, "child\(child)", "20"])
            }
            // The parent writes too, while the children run.
            for index in 0..<20 { try store.setValue(.int(Int64(index)), forKey: "parent.\(index)") }
            for (process, _, error) in children {
                process.waitUntilExit()
                let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(process.terminationStatus == 0, "\(message)")
            }
            var expected: [String: DefaultsValue] = ["owner": .string("parent")]
            for prefix in ["child0", "child1", "child2", "child3", "parent"] {
                for index in 0..<20 { expected["\(prefix).\(index)"] = .int(Int64(index)) }
            }
            #expect(try JSONFileDecoder.decode(Array(FileFacts.bytes(path))) == expected)
            // A write brings this process up to date whatever the watcher has delivered so far.
            try store.setValue(.bool(true), forKey: "done")
            expected["done"] = .bool(true)
            #expect(try store.allValues() == expected)
        }
    }

    @Test func anotherProcessReadsWhatThisOneWrote() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            try JSONFileProvider(path: path).setValue(.int(42), forKey: "answer")
            let result = try ChildProcess.run("TestChild", ["get", "json:" + path, "answer"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == "\(DefaultsValue.int(42))\n")
        }
    }

    @Test func anotherProcessesWriteArrivesAsAnExternalEvent() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            let events = EventLog(store)
            let result = try ChildProcess.run("TestChild", ["apply", "json:" + path, "fromChild=7"])
            #expect(result.status == 0, "\(result.standardError)")
            _ = waitUntil { !events.all.isEmpty }
            #expect(events.all == [DefaultsChangeEvent(key: "fromChild", newValue: .int(7), origin: .external)])
            #expect(try store.value(forKey: "fromChild") == .int(7))
        }
    }

    /// Through the cache too: the external event invalidates the cached absence.
    @Test func aCachedStoreSeesAnotherProcessesWrite() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path).cached()
            #expect(try store.value(forKey: "fromChild") == nil)
            let events = EventLog(store)
            let result = try ChildProcess.run("TestChild", ["apply", "json:" + path, "fromChild=8"])
            #expect(result.status == 0, "\(result.standardError)")
            _ = waitUntil { !events.all.isEmpty }
            #expect(try store.value(forKey: "fromChild") == .int(8))
        }
    }

    @Test func aWriterWaitsForTheLockAndGivesUpAsBusy() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path, options: .init(lockTimeout: .milliseconds(150)))
            let (holder, output, _) = try ChildProcess.start("TestChild", ["hold-lock", "json:" + store.path, "600"])
            defer {
                // Reaped, not only killed: a zombie child makes Swift Testing's exit-test monitor
                // spin and the exit tests wait forever.
                kill(holder.processIdentifier, SIGKILL)
                holder.waitUntilExit()
            }
            // Wait until the child has the lock.
            let line = output.fileHandleForReading.availableData
            #expect(String(decoding: line, as: UTF8.self) == "locked\n")
            let started = ContinuousClock.now
            let error = try #require(defaultsError { try store.setValue(.int(1), forKey: "a") })
            #expect(error.code == .busy)
            #expect(error.path == store.path + ".lock")
            #expect(ContinuousClock.now - started >= .milliseconds(150))
            #expect(try store.value(forKey: "a") == nil)
            // Once the holder is gone (killed half a second from now), writing works; a patient
            // writer simply waits.
            let pid = holder.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(500)) { kill(pid, SIGKILL) }
            let patient = try JSONFileProvider(path: path)
            try patient.setValue(.int(2), forKey: "a")
            #expect(ContinuousClock.now - started >= .milliseconds(500))
            holder.waitUntilExit()
            #expect(try store.value(forKey: "a") == .int(2))
        }
    }

    /// A process killed in the middle of writing leaves the old file or the new one, never a
    /// torn one.
    @Test func aKilledWriterNeverLeavesATornFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            var deadWriter: Int32 = 0
            for round in 0..<3 {
                let (writer, _, _) = try ChildProcess.start("TestChild", ["write-forever", "json:" + path])
                deadWriter = writer.processIdentifier
                // Killed while it rewrites the file: after its first write (a loaded machine may
                // take longer than the pause below to start it).
                let started = ContinuousClock.now
                while !FileManager.default.fileExists(atPath: path), ContinuousClock.now - started < .seconds(30) { usleep(1_000) }
                usleep(UInt32(150_000 + round * 70_000))
                kill(writer.processIdentifier, SIGKILL)
                writer.waitUntilExit()
                let values = try JSONFileDecoder.decode(Array(FileFacts.bytes(path)))
                guard case .int(let counter)? = values["counter"], case .string(let payload)? = values["payload"] else {
                    Issue.record("round \(round): the file lacks the written keys")
                    continue
                }
                #expect(payload.count == Int(counter % 5000))
                // A fresh process would open it without complaint.
                let check = try ChildProcess.run("TestChild", ["get", "json:" + path, "counter"])
                #expect(check.status == 0, "\(check.standardError)")
            }
            // Opening the file clears what the killed writers left behind (once it is older than
            // a few seconds: here made so), and nothing else: not the file of a live process,
            // nor a fresh one.
            let old = Date(timeIntervalSinceNow: -60)
            try FileFacts.write("", to: directory.path(".s.json.tmp-\(getpid())-live"))
            try FileFacts.write("", to: directory.path(".s.json.tmp-\(deadWriter)-abandoned"))
            for name in try FileFacts.names(in: directory.path) where name.contains(".tmp-") {
                try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: directory.path(name))
            }
            try FileFacts.write("", to: directory.path(".s.json.tmp-\(deadWriter)-fresh"))
            _ = try JSONFileProvider(path: path)
            #expect(
                Set(try FileFacts.names(in: directory.path))
                    == [".s.json.tmp-\(deadWriter)-fresh", ".s.json.tmp-\(getpid())-live", "s.json", "s.json.lock"])
        }
    }
}
