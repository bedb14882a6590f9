import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Changes made by another, real process (TestChild) reach a store open in this
/// one: on every backend that claims `.externalChanges`, plain and behind a cache.
@Suite(.ownThreads) struct ExternalChangesTests {
    @Test(arguments: Backend.all, [false, true])
    func theKeysAnotherProcessChangedArriveAsExternalEvents(_ backend: Backend, cached: Bool) throws {
        try withStoreLocation(backend) { configuration, _ in
            let store = try backend.open(configuration, cached: cached)
            defer { store.close() }
            #expect(store.provider.capabilities.contains(.externalChanges))
            try store.provider.apply([.set("a", .int(1)), .set("b", .int(2)), .set("same", .int(5))])
            // Read every key once, so that a cache holds each value, and the absence of the others.
            let shuffled = (0..<20).map { "k\(($0 * 7) % 20)" }
            for key in ["a", "b", "c", "d", "same"] + shuffled { _ = try store.provider.value(forKey: key) }
            let events = EventLog(store.provider)

            // One process, one write per argument: rewriting a value or removing an absent key
            // changes nothing and must report nothing.
            try backend.write(configuration, ["c=3", "-a", "b=20,d=4,same=5", "-absent"] + shuffled.map { "\($0)=1" })

            var expected = [
                DefaultsChangeEvent(key: "c", newValue: .int(3), origin: .external),
                DefaultsChangeEvent(key: "a", newValue: nil, origin: .external),
                DefaultsChangeEvent(key: "b", newValue: .int(20), origin: .external),
                DefaultsChangeEvent(key: "d", newValue: .int(4), origin: .external),
            ]
            expected += shuffled.map { DefaultsChangeEvent(key: $0, newValue: .int(1), origin: .external) }
            let received = events.settled(at: expected.count)
            #expect(received.allSatisfy { $0.origin == .external })
            if backend.ordersKeysWithinABurst {
                #expect(received.map(describe) == expected.map(describe))
            } else {
                #expect(received.count == expected.count)
                #expect(Set(received.map(describe)) == Set(expected.map(describe)))
            }
            // What the events said is what reads return now: a cache forgot what it held.
            #expect(try store.provider.value(forKey: "a") == nil)
            #expect(try store.provider.value(forKey: "b") == .int(20))
            #expect(try store.provider.value(forKey: "c") == .int(3))
            #expect(try store.provider.value(forKey: "d") == .int(4))
            #expect(try store.provider.value(forKey: "k7") == .int(1))
        }
    }

    /// Writes far enough apart to be read one by one arrive in the order they were made, on every
    /// backend (the file backends cannot order the keys of writes that arrive together).
    /// A process that starts watching while this one is already writing gets every later write:
    /// the writer remembers that no one watched only until another commit (the lease) happens.
    @Test(arguments: Backend.all.filter(\.ordersKeysWithinABurst))
    func aWatcherThatArrivesLaterGetsTheLaterWrites(_ backend: Backend) throws {
        try withStoreLocation(backend) { configuration, _ in
            let store = try backend.open(configuration, cached: false)
            defer { store.close() }
            try store.provider.setValue(.int(1), forKey: "before")  // no one watches yet
            try store.provider.setValue(.int(2), forKey: "before")
            let (child, output, _) = try ChildProcess.start("TestChild", ["watch", configuration, "2"])
            let reader = output.fileHandleForReading
            var text = ""
            while !text.contains("ready\n"), let chunk = try reader.read(upToCount: 1), !chunk.isEmpty {
                text += String(decoding: chunk, as: UTF8.self)
            }
            try store.provider.setValue(.int(3), forKey: "after")
            try store.provider.apply([.set("later", .int(4))])
            text += String(decoding: try reader.readToEnd() ?? Data(), as: UTF8.self)
            child.waitUntilExit()
            #expect(child.terminationStatus == 0)
            #expect(text == "ready\nafter=3\nlater=4\n")
        }
    }

    @Test(arguments: Backend.all)
    func separateWritesArriveInTheOrderTheyWereMade(_ backend: Backend) throws {
        try withStoreLocation(backend) { configuration, _ in
            let store = try backend.open(configuration, cached: true)
            defer { store.close() }
            let events = EventLog(store.provider)
            let writes = [("zeta", 1), ("alpha", 2), ("zeta", 3), ("mid", 4)]
            for (index, (key, value)) in writes.enumerated() {
                try backend.write(configuration, ["\(key)=\(value)"])
                _ = events.wait(for: index + 1)
            }
            #expect(events.settled(at: writes.count).map(describe) == writes.map { "\($0.0)=\($0.1)" })
            #expect(try store.provider.value(forKey: "zeta") == .int(3))
        }
    }

    /// Once a store is closed, or released, nothing more arrives.
    @Test(arguments: Backend.all)
    func aClosedOrReleasedStoreHearsNothingMore(_ backend: Backend) throws {
        try withStoreLocation(backend) { configuration, _ in
            let events = Recorder<DefaultsChangeEvent>()
            var store: Backend.Store? = try backend.open(configuration, cached: true)
            let observation = store?.provider.observe { events.record($0) }
            try backend.write(configuration, ["before=1"])
            #expect(events.wait(for: 1).map(\.key) == ["before"])

            store?.close()
            store = nil
            try backend.write(configuration, ["after=1"])
            #expect(events.settled(at: 2, timeout: .milliseconds(300)).map(\.key) == ["before"])
            observation?.cancel()
        }
    }

    /// Opening and closing 200 stores, each observed (half of them through a cache) and written,
    /// leaves no file descriptor, inotify watch or thread behind. Measured in a child process, so
    /// that tests running in parallel here do not disturb the counts.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fdinfo")), arguments: Backend.all)  // portability-check: allowed, the test is enabled where /proc exists
    func manyStoresOpenedAndClosedLeaveNothingBehind(_ backend: Backend) throws {
        // In memory where there is a tmpfs: this is about what the process holds, and 200 stores
        // on a disk cost seconds of flushes.
        let directory = try TemporaryDirectory(under: "/dev/shm")
        defer { directory.remove() }
        // Each store in a directory of its own, so each needs an inotify watch of its own.
        for index in 0...200 {
            try FileManager.default.createDirectory(atPath: directory.path("\(index)"), withIntermediateDirectories: false)
        }
        let template = backend.configuration(directory, "{n}/store")
        let result = try ChildProcess.run("TestChild", ["leaks", template, "200"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
        try #require(lines.count == 3 && lines.allSatisfy { $0.count == 3 }, "\(result.standardOutput)")
        let (before, during, after) = (lines[0], lines[1], lines[2])
        // While open, the stores held something (so the counts can show a leak; UserDefaults
        // keeps no file open)...
        #expect(during[0] > before[0] || backend.name == "UserDefaults", "file descriptors: \(lines)")
        #expect(during[2] > before[2], "inotify watches: \(lines)")
        // ...and afterwards exactly what the process held before.
        #expect(after[0] == before[0], "file descriptors: \(lines)")
        #expect(after[2] == before[2], "inotify watches: \(lines)")
        // Dispatch may keep an idle worker thread or two.
        #expect(after[1] <= before[1] + 2, "threads: \(lines)")
        // UserDefaults suites live in the preferences directory; remove the 201 made here.
        for index in 0...200 { backend.remove(template.replacingOccurrences(of: "{n}", with: "\(index)")) }
    }
}

/// An event as `key=value` (or `key=nil`), for short failure messages.
private func describe(_ event: DefaultsChangeEvent) -> String {
    "\(event.key)=\(event.newValue.map { "\($0)" } ?? "nil")"
}
