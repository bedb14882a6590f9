import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite(.ownThreads) struct FileChangeMonitorTests {
    final class Counter: Sendable {
        let count = Mutex(0)
        func bump() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }

        /// Waits until the count exceeds `previous`, at most `timeout` seconds (a loaded machine can
        /// take seconds to deliver a file event; a passing wait returns at once).
        func waitBeyond(_ previous: Int, timeout: Double = 30) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if value > previous { return true }
                usleep(2_000)
            }
            return value > previous
        }
    }

    static let strategies: [FileChangeMonitor.Strategy] = [.automatic, .polling(interval: .milliseconds(20))]

    @Test(arguments: strategies)
    func seesWritesReplacementsCreationAndRemoval(strategy: FileChangeMonitor.Strategy) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.json")
            let counter = Counter()
            let monitor = try FileChangeMonitor(watching: [path], strategy: strategy) { counter.bump() }
            defer { monitor.cancel() }

            var seen = counter.value
            try Data("created".utf8).write(to: URL(fileURLWithPath: path))
            #expect(counter.waitBeyond(seen), "creation not seen")

            usleep(30_000)
            seen = counter.value
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(" and appended".utf8))
            try handle.close()
            #expect(counter.waitBeyond(seen), "an in-place write not seen")

            usleep(30_000)
            seen = counter.value
            try Data("replaced by rename".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            #expect(counter.waitBeyond(seen), "a rename over the file not seen")

            usleep(30_000)
            seen = counter.value
            try FileManager.default.removeItem(atPath: path)
            #expect(counter.waitBeyond(seen), "removal not seen")
        }
    }

    /// A watched file that is a symbolic link to a file in another directory: a write to the
    /// target through its own path is seen.
    @Test(arguments: strategies)
    func seesWritesToTheTargetOfALink(strategy: FileChangeMonitor.Strategy) throws {
        try withTemporaryDirectory { directory in
            let elsewhere = directory.path("elsewhere")
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            let target = elsewhere + "/store.json"
            try Data("first".utf8).write(to: URL(fileURLWithPath: target))
            let path = directory.path("store.json")
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            let counter = Counter()
            let monitor = try FileChangeMonitor(watching: [path], strategy: strategy) { counter.bump() }
            defer { monitor.cancel() }
            usleep(30_000)
            let seen = counter.value
            try Data("second, longer".utf8).write(to: URL(fileURLWithPath: target), options: .atomic)
            #expect(counter.waitBeyond(seen), "a write to the link's target not seen")
        }
    }

    /// The watched file's directory removed and made again (with a file in it held open, as a
    /// store's lock file is: the kernel then reports the directory's own removal only when that
    /// file is closed): the monitor sees the removal, then changes in the new directory.
    @Test(arguments: strategies, [false, true])
    func followsTheDirectoryWhenItIsRemovedAndMadeAgain(strategy: FileChangeMonitor.Strategy, holdingAFileOpen: Bool) throws {
        try withTemporaryDirectory { directory in
            let folder = directory.path("d")
            let path = folder + "/store.json"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("first".utf8).write(to: URL(fileURLWithPath: path))
            let held = holdingAFileOpen ? open(folder + "/store.json.lock", O_RDWR | O_CREAT, 0o600) : -1
            defer { if held >= 0 { close(held) } }
            let counter = Counter()
            let monitor = try FileChangeMonitor(watching: [path], strategy: strategy) { counter.bump() }
            defer { monitor.cancel() }

            var seen = counter.value
            try FileManager.default.removeItem(atPath: folder)
            #expect(counter.waitBeyond(seen), "the removal not seen")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // Whatever the new directory wakes, then a quiet moment.
            usleep(700_000)
            seen = counter.value
            try Data("second".utf8).write(to: URL(fileURLWithPath: path))
            #expect(counter.waitBeyond(seen), "a file written in the new directory not seen")
        }
    }

    /// `.touchOrReplacement` wakes on a touch and a replacement, not on writes, even while another
    /// monitor of the same directory wants writes (and only until that one is cancelled).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fdinfo")))  // portability-check: allowed, the test is enabled where /proc exists
    func aTouchMonitorIgnoresWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("data.mdb")
            try Data("start".utf8).write(to: URL(fileURLWithPath: path))
            let touches = Counter()
            let writes = Counter()
            let monitor = try FileChangeMonitor(watching: [path], trigger: .touchOrReplacement) { touches.bump() }
            defer { monitor.cancel() }
            var everything: FileChangeMonitor? = try FileChangeMonitor(watching: [path]) { writes.bump() }

            func append() throws {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(" more".utf8))
                try handle.close()
            }
            try append()
            #expect(writes.waitBeyond(0), "the other monitor sees the write")
            usleep(50_000)
            #expect(touches.value == 0, "a write woke the touch monitor")

            #expect(utimensat(AT_FDCWD, path, nil, 0) == 0)
            #expect(touches.waitBeyond(0), "a touch not seen")

            everything?.cancel()
            everything = nil
            let seen = touches.value
            try append()
            usleep(50_000)
            #expect(touches.value == seen, "a write woke the touch monitor")
            try Data("replaced".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            #expect(touches.waitBeyond(seen), "a replacement not seen")
        }
    }

    @Test(arguments: strategies)
    func ignoresOtherFilesAndStopsWhenCancelled(strategy: FileChangeMonitor.Strategy) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("watched")
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            let counter = Counter()
            let monitor = try FileChangeMonitor(watching: [path], strategy: strategy) { counter.bump() }
            usleep(50_000)
            try Data("other".utf8).write(to: URL(fileURLWithPath: directory.path("unrelated")))
            usleep(150_000)
            #expect(counter.value == 0, "a change to another file was reported")

            monitor.cancel()
            monitor.cancel()
            try Data("after cancel".utf8).write(to: URL(fileURLWithPath: path))
            usleep(150_000)
            #expect(counter.value == 0, "a change after cancel() was reported")
        }
    }

    #if os(Linux)
    /// Opening and closing many monitors leaks no file descriptor and no watch. The monitors
    /// share one inotify descriptor, so what this test checks is its own: at most one inotify
    /// descriptor in the process, and once the monitors are gone, no watch left on the directory.
    /// (Counting every descriptor of the process would count the files and pipes of the tests
    /// running beside this one.)
    @Test func manyMonitorsLeakNoDescriptors() throws {
        try withTemporaryDirectory { directory in
            var status = stat()
            try #require(stat(directory.path, &status) == 0)
            let inode = String(UInt64(status.st_ino), radix: 16)
            /// The inotify descriptors of this process, and how many of their watches are on the
            /// directory (`/proc/self/fdinfo` lists each watch with the inode it watches, in hex).
            func inotify() -> (descriptors: Int, watches: Int) {
                let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                var count = 0
                var watches = 0
                for name in descriptors {
                    guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                        target == "anon_inode:inotify",
                        let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + name, encoding: .utf8)
                    else { continue }
                    count += 1
                    watches += info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") && $0.contains(" ino:\(inode) ") }.count
                }
                return (count, watches)
            }
            var monitors: [FileChangeMonitor] = []
            for index in 0..<200 {
                let monitor = try FileChangeMonitor(watching: [directory.path("f\(index)")]) {}
                if index.isMultiple(of: 2) { monitor.cancel() } else { monitors.append(monitor) }
            }
            #expect(inotify().watches == 1, "the live monitors watch the directory once")
            monitors.removeAll()  // the others are released by deinit
            // Cancel handlers remove the watch on the monitors' queues.
            #expect(waitUntil { inotify().watches == 0 }, "a watch outlived its monitors")
            #expect(inotify().descriptors <= 1, "monitors opened inotify descriptors of their own")
        }
    }
    #endif

    @Test func aMissingDirectoryIsAnError() {
        #if os(Linux)
        #expect(throws: DefaultsError.self) {
            try FileChangeMonitor(watching: ["/nonexistent-\(UUID().uuidString)/file"]) {}
        }
        #endif
    }
}
