import AnyDefaultsPlatform
import Dispatch
import Synchronization

/// Tells when any process changes, replaces, creates or removes one of a set of files, for
/// backends that report changes made elsewhere.
///
/// On Linux it uses inotify on the files' directories, and on Apple platforms the kernel's event
/// queue (kqueue) on the files and their directories, so an idle store costs nothing and a change
/// is seen at once; on request (and on other systems) it compares each file's size, times and
/// inode at a fixed interval (a few `stat` calls per tick). `onChange` runs on a private serial queue, once per
/// burst of changes; it is not told what changed, so the backend reads that itself. A call
/// already queued when ``cancel()`` runs may still arrive.
///
/// ```swift
/// let monitor = try FileChangeMonitor(watching: [path]) { store.reloadIfChanged() }
/// // ...
/// monitor.cancel()
/// ```
package final class FileChangeMonitor: Sendable {
    /// How changes are detected.
    package enum Strategy: Sendable, Hashable {
        /// inotify on Linux, kqueue on Apple platforms; polling every 50 ms elsewhere.
        case automatic
        /// Compare `stat` results at this interval, on every platform.
        case polling(interval: Duration)
    }

    /// Which changes wake the monitor.
    package enum Trigger: Sendable, Hashable {
        /// Any change: a write to a file's contents, the file created, replaced or removed, its
        /// times or permissions set.
        case anyChange
        /// The file created, replaced or removed, or its times or permissions set (`touch`), but
        /// not writes to its contents: for files whose writers announce a change by touching
        /// them once it is visible (``ChangeLog/ringDoorbell(path:)``), so that the writes
        /// themselves, this process's included, wake no one. Polling sees every change.
        case touchOrReplacement
    }

    private let source: Mutex<(any DispatchSourceProtocol)?>
    #if os(Linux)
    private let watch: Mutex<InotifyHub.Registration?>
    #elseif canImport(Darwin)
    private let watch: Mutex<KernelEventWatch?>
    #endif

    /// Starts watching `files` (which need not exist yet; their directories must), and the files
    /// those that are symbolic links lead to (as they are when the watch starts).
    ///
    /// - Throws: ``DefaultsError`` if the operating system refuses the watch.
    package init(
        watching files: [String],
        strategy: Strategy = .automatic,
        trigger: Trigger = .anyChange,
        backend: String = "FileChangeMonitor",
        onChange: @escaping @Sendable () -> Void
    ) throws(DefaultsError) {
        let queue = DispatchQueue(label: "AnyDefaults.FileChangeMonitor")
        switch strategy {
        case .polling(let interval):
            source = Mutex(Self.pollingSource(files: files, interval: interval, queue: queue, onChange: onChange))
            #if os(Linux) || canImport(Darwin)
            watch = Mutex(nil)
            #endif
        case .automatic:
            #if os(Linux)
            source = Mutex(nil)
            let mask = trigger == .anyChange ? InotifyHub.everyChange : InotifyHub.touchOrReplacement
            // A file that is a symbolic link changes where its target is: that directory is watched too.
            let targets = files.compactMap { file in (try? FileReplacement.followingLinks(file)).flatMap { $0 == file ? nil : $0 } }
            watch = Mutex(
                try InotifyHub.shared.register(files: files + targets, mask: mask, queue: queue, backend: backend, onChange: onChange))
            #elseif canImport(Darwin)
            source = Mutex(nil)
            let targets = files.compactMap { file in (try? FileReplacement.followingLinks(file)).flatMap { $0 == file ? nil : $0 } }
            watch = Mutex(KernelEventWatch(files: files + targets, trigger: trigger, queue: queue, onChange: onChange))
            #else
            source = Mutex(Self.pollingSource(files: files, interval: .milliseconds(50), queue: queue, onChange: onChange))
            #endif
        }
    }

    /// Stops watching and releases the watch's file descriptor. Calling it again does nothing.
    package func cancel() {
        let current = source.withLock { source in
            defer { source = nil }
            return source
        }
        current?.cancel()
        #if os(Linux)
        let registration = watch.withLock { watch in
            defer { watch = nil }
            return watch
        }
        if let registration { InotifyHub.shared.unregister(registration) }
        #elseif canImport(Darwin)
        let kernelWatch = watch.withLock { watch in
            defer { watch = nil }
            return watch
        }
        kernelWatch?.cancel()
        #endif
    }

    deinit { cancel() }

    // MARK: Polling

    /// What a file looks like from outside; a change in any field means it was written or replaced.
    struct Signature: Equatable {
        var exists = false
        var size: Int64 = 0
        var inode: UInt64 = 0
        var modified: (Int, Int) = (0, 0)
        var changed: (Int, Int) = (0, 0)

        static func == (a: Signature, b: Signature) -> Bool {
            a.exists == b.exists && a.size == b.size && a.inode == b.inode && a.modified == b.modified && a.changed == b.changed
        }

        init() {}

        init(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return }
            exists = true
            size = Int64(info.st_size)
            inode = info.fileID.inode
            modified = (Int(info.modificationTime.seconds), Int(info.modificationTime.nanoseconds))
            changed = (Int(info.changeTime.seconds), Int(info.changeTime.nanoseconds))
        }
    }

    /// The signatures of the last tick; only the timer's serial queue touches them.
    private final class PollingState: Sendable {
        let signatures: Mutex<[Signature]>
        init(_ signatures: [Signature]) { self.signatures = Mutex(signatures) }
    }

    private static func pollingSource(
        files: [String], interval: Duration, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void
    ) -> any DispatchSourceProtocol {
        let state = PollingState(files.map(Signature.init(path:)))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let (seconds, attoseconds) = interval.components
        let nanoseconds = max(1_000_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds), leeway: .nanoseconds(nanoseconds / 10))
        timer.setEventHandler {
            let now = files.map(Signature.init(path:))
            let changed = state.signatures.withLock { old in
                defer { old = now }
                return old != now
            }
            if changed { onChange() }
        }
        timer.resume()
        return timer
    }
}
