#if canImport(Darwin)
import AnyDefaultsPlatform
import Dispatch
import Synchronization

/// ``FileChangeMonitor``'s watch on Apple platforms: the kernel's event queue (kqueue, through
/// Dispatch file-system sources) on each file and on each file's directory, so that an idle store
/// costs no system call and a change is seen when it happens.
///
/// A source follows an open file, not a path: a file replaced by `rename` or made again is a new
/// file. So every event compares the files' signatures (size, times, inode) with the last ones,
/// reports a change once, and opens the sources again on what the paths name now. A directory
/// removed and made again has no source to tell; a check every second finds it.
final class KernelEventWatch: Sendable {
    private struct State {
        var sources: [any DispatchSourceFileSystemObject] = []
        var signatures: [FileChangeMonitor.Signature]
        var cancelled = false
    }

    /// Interval of the check that finds what no source can report (a directory made again).
    private static let sweepInterval = DispatchTimeInterval.seconds(1)

    private let files: [String]
    private let fileEvents: DispatchSource.FileSystemEvent
    private let queue: DispatchQueue
    private let onChange: @Sendable () -> Void
    private let state: Mutex<State>
    private let sweep: any DispatchSourceTimer

    init(
        files: [String], trigger: FileChangeMonitor.Trigger, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void
    ) {
        self.files = files
        // Writes to a file's contents wake the monitor only for `.anyChange`; a directory's
        // `.write` is an entry created, removed or renamed in it (a file made or replaced).
        self.fileEvents =
            trigger == .anyChange
            ? [.write, .extend, .attrib, .delete, .rename, .link, .revoke]
            : [.attrib, .delete, .rename, .link, .revoke]
        self.queue = queue
        self.onChange = onChange
        self.state = Mutex(State(signatures: files.map(FileChangeMonitor.Signature.init(path:))))
        self.sweep = DispatchSource.makeTimerSource(queue: queue)
        sweep.schedule(deadline: .now() + Self.sweepInterval, repeating: Self.sweepInterval, leeway: .milliseconds(100))
        sweep.setEventHandler { [weak self] in self?.check() }
        queue.async { [weak self] in self?.arm() }
        sweep.resume()
    }

    /// Stops every source and the sweep; no event is reported after it returns, except one
    /// already running on the queue.
    func cancel() {
        let sources = state.withLock { state in
            state.cancelled = true
            defer { state.sources = [] }
            return state.sources
        }
        sources.forEach { $0.cancel() }
        sweep.cancel()
    }

    deinit { cancel() }

    /// On the queue: compares the files with their last signatures, reports a change, and opens
    /// the sources again when anything moved.
    private func check() {
        let now = files.map(FileChangeMonitor.Signature.init(path:))
        let changed = state.withLock { state in
            guard !state.cancelled, state.signatures != now else { return false }
            state.signatures = now
            return true
        }
        guard changed else { return }
        arm()
        onChange()
    }

    /// On the queue: a source on every file that exists and on every directory, replacing the old ones.
    private func arm() {
        let directoryEvents: DispatchSource.FileSystemEvent = [.write, .delete, .rename, .revoke]
        let directories = Array(Set(files.map(FileReplacement.directory(of:)))).sorted()
        let watched: [(path: String, events: DispatchSource.FileSystemEvent)] =
            files.map { ($0, fileEvents) } + directories.map { ($0, directoryEvents) }
        var sources: [any DispatchSourceFileSystemObject] = []
        for (path, events) in watched {
            // O_EVTONLY: a descriptor for events only, which does not keep a volume from unmounting.
            let descriptor = open(path, O_EVTONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: descriptor, eventMask: events, queue: queue)
            source.setEventHandler { [weak self] in self?.check() }
            source.setCancelHandler { close(descriptor) }
            // Resumed at once: Dispatch must never release a source that was not activated.
            source.resume()
            sources.append(source)
        }
        let old = state.withLock { state in
            guard !state.cancelled else { return sources }
            defer { state.sources = sources }
            return state.sources
        }
        old.forEach { $0.cancel() }
    }
}
#endif
