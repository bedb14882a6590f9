#if os(Linux)
import AnyDefaultsPlatform
import Dispatch
import Synchronization

/// One inotify instance for the whole process, shared by every ``FileChangeMonitor``: the kernel
/// allows few instances per user (128 by default) but many watches, so each monitor adds watches
/// to this one instance instead of opening its own.
///
/// A watched directory that is removed or moved away ends its watch; its monitors are told (their
/// files are gone from the path) and the hub watches the path again as soon as a directory is
/// there, telling them again: a store whose directory is removed and made again is followed, not
/// left silent. The kernel reports a directory's own removal only once nothing holds a file in
/// it open (a store's lock or database file does), so after any file of a watched directory is
/// removed or moved away the hub also checks that the path still leads to the directory watched.
final class InotifyHub: Sendable {
    struct Registration: Sendable {
        let id: Int
        let directories: [String]
    }

    private struct Watcher {
        var names: Set<String>
        /// The inotify events this monitor wants.
        var mask: UInt32
        var queue: DispatchQueue
        var onChange: @Sendable () -> Void
    }

    private struct State {
        var descriptor: Int32 = -1
        var source: (any DispatchSourceRead)?
        var nextID = 0
        /// Watch descriptor → the monitors that watch that directory.
        var watchers: [Int32: [Int: Watcher]] = [:]
        /// Watch descriptor → its directory, to narrow the watch when a monitor leaves.
        var directories: [Int32: String] = [:]
        /// Directory → its watch descriptor.
        var watches: [String: Int32] = [:]
        /// Watch descriptor → the identity (device, inode) of the directory it watches.
        var identities: [Int32: DirectoryIdentity] = [:]
        /// Monitors of directories removed or moved away, until a directory is at the path again.
        var orphans: [String: [Int: Watcher]] = [:]
        var rewatchScheduled = false
    }

    /// The events that end a directory's watch: the directory removed (`IN_IGNORED` follows) or
    /// moved away (the watch would follow it elsewhere).
    private static let directoryGone = UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)
    /// How often a removed directory's path is tried again.
    static let rewatchInterval = DispatchTimeInterval.milliseconds(100)
    /// How long after a file of a watched directory is removed the directory itself is checked
    /// (`rm -r` removes the files first).
    static let checkDelays: [DispatchTimeInterval] = [.milliseconds(50), .milliseconds(500)]

    struct DirectoryIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
        }
    }

    /// The events of a monitor that wants every change to its files.
    static let everyChange = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
    /// The events of a monitor woken only when its files are replaced, created, removed, or
    /// touched (their times set): not by writes to their contents.
    static let touchOrReplacement = UInt32(IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)

    static let shared = InotifyHub()

    /// How long the hub leaves new events queued after telling monitors of a change.
    static let pause = DispatchTimeInterval.milliseconds(5)

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "AnyDefaults.InotifyHub")

    private init() {}

    func register(
        files: [String], mask: UInt32, queue: DispatchQueue, backend: String, onChange: @escaping @Sendable () -> Void
    ) throws(DefaultsError) -> Registration {
        var byDirectory: [String: Set<String>] = [:]
        for file in files {
            let slash = file.lastIndex(of: "/")
            let directory = slash.map { $0 == file.startIndex ? "/" : String(file[..<$0]) } ?? "."
            byDirectory[directory, default: []].insert(slash.map { String(file[file.index(after: $0)...]) } ?? file)
        }
        return try state.withLock { (state: inout State) throws(DefaultsError) -> Registration in
            try startIfNeeded(&state, backend: backend)
            let id = state.nextID
            state.nextID += 1
            var directories: [String] = []
            for (directory, names) in byDirectory {
                // IN_MASK_ADD: the directory's watch (one per directory and instance) keeps the
                // events its other monitors want.
                let watch = inotify_add_watch(state.descriptor, directory, mask | Self.directoryGone | UInt32(IN_MASK_ADD))
                guard watch >= 0 else {
                    let reason = String(cString: strerror(errno))
                    Self.remove(id, directories, from: &state)
                    throw DefaultsError(.ioFailure, "Cannot watch the directory for changes (inotify_add_watch: \(reason)).", backend: backend, path: directory)
                }
                state.watchers[watch, default: [:]][id] = Watcher(names: names, mask: mask, queue: queue, onChange: onChange)
                state.directories[watch] = directory
                state.watches[directory] = watch
                state.identities[watch] = DirectoryIdentity(directory)
                directories.append(directory)
            }
            return Registration(id: id, directories: directories)
        }
    }

    func unregister(_ registration: Registration) {
        state.withLock { Self.remove(registration.id, registration.directories, from: &$0) }
    }

    private static func remove(_ id: Int, _ directories: [String], from state: inout State) {
        for directory in directories {
            if state.orphans[directory] != nil {
                state.orphans[directory]?[id] = nil
                if state.orphans[directory]?.isEmpty == true { state.orphans[directory] = nil }
                continue
            }
            guard let watch = state.watches[directory] else { continue }
            state.watchers[watch]?[id] = nil
            if state.watchers[watch]?.isEmpty == true {
                state.watchers[watch] = nil
                state.directories[watch] = nil
                state.identities[watch] = nil
                state.watches[directory] = nil
                inotify_rm_watch(state.descriptor, watch)
            } else if let remaining = state.watchers[watch] {
                // Narrow the watch to what the remaining monitors want, so that no event only the
                // departed one wanted wakes this process.
                _ = inotify_add_watch(state.descriptor, directory, remaining.values.reduce(directoryGone) { $0 | $1.mask })
            }
        }
    }

    /// Takes the monitors of the watches whose directory went away off those watches, to wait for
    /// a directory at the path again; returns them, to be told that their files are gone.
    private static func orphan(_ gone: Set<Int32>, in state: inout State) -> [Int: Watcher] {
        var told: [Int: Watcher] = [:]
        for watch in gone {
            guard let directory = state.directories.removeValue(forKey: watch) else { continue }
            let watchers = state.watchers.removeValue(forKey: watch) ?? [:]
            state.identities[watch] = nil
            if state.watches[directory] == watch { state.watches[directory] = nil }
            // A directory moved away is still watched where it went: stop that.
            inotify_rm_watch(state.descriptor, watch)
            guard !watchers.isEmpty else { continue }
            state.orphans[directory, default: [:]].merge(watchers) { first, _ in first }
            told.merge(watchers) { first, _ in first }
        }
        return told
    }

    /// Watches again every orphaned directory that is back at its path, telling its monitors;
    /// tries again later while some are not.
    private func rewatch() {
        let told: [Watcher] = state.withLock { state in
            state.rewatchScheduled = false
            var told: [Watcher] = []
            for (directory, watchers) in state.orphans {
                let mask = watchers.values.reduce(Self.directoryGone) { $0 | $1.mask }
                let watch = inotify_add_watch(state.descriptor, directory, mask | UInt32(IN_MASK_ADD))
                guard watch >= 0 else { continue }
                state.orphans[directory] = nil
                state.watchers[watch, default: [:]].merge(watchers) { first, _ in first }
                state.directories[watch] = directory
                state.watches[directory] = watch
                state.identities[watch] = DirectoryIdentity(directory)
                told += watchers.values
            }
            scheduleRewatch(&state)
            return told
        }
        // Their files may be there already (made with the directory): they read them now.
        for watcher in told { watcher.queue.async(execute: watcher.onChange) }
    }

    /// Orphans the watches among `suspects` whose path no longer leads to the directory watched,
    /// telling their monitors.
    private func checkDirectories(_ suspects: Set<Int32>) {
        let told: [Int: Watcher] = state.withLock { state in
            let moved = suspects.filter { watch in
                guard let directory = state.directories[watch] else { return false }
                return DirectoryIdentity(directory) != state.identities[watch]
            }
            let told = Self.orphan(moved, in: &state)
            scheduleRewatch(&state)
            return told
        }
        for watcher in told.values { watcher.queue.async(execute: watcher.onChange) }
    }

    private func scheduleRewatch(_ state: inout State) {
        guard !state.orphans.isEmpty, !state.rewatchScheduled else { return }
        state.rewatchScheduled = true
        queue.asyncAfter(deadline: .now() + Self.rewatchInterval) { [weak self] in self?.rewatch() }
    }

    private func startIfNeeded(_ state: inout State, backend: String) throws(DefaultsError) {
        guard state.descriptor < 0 else { return }
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            throw DefaultsError(.ioFailure, "Cannot start watching for changes (inotify_init1: \(String(cString: strerror(errno)))).", backend: backend)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            guard let self, drain(descriptor) else { return }
            // After telling monitors of a change, events arriving in the next moment wait in the
            // queue instead of waking this thread one by one: a process writing a file in a
            // loop makes several per write (a temporary file created, written, closed, renamed),
            // and each wake-up cost the writing thread time (a fifth of a JSON file write).
            // The first change after a quiet moment is still told at once.
            self.state.withLock { $0.source?.suspend() }
            queue.asyncAfter(deadline: .now() + Self.pause) { [weak self] in
                self?.state.withLock { $0.source?.resume() }
            }
        }
        source.resume()
        state.descriptor = descriptor
        state.source = source
    }

    /// Reads every queued event and tells each monitor whose file had an event it wants, once
    /// per drain; whether it told any.
    private func drain(_ descriptor: Int32) -> Bool {
        var touched: [Int32: [String: UInt32]] = [:]
        var gone: Set<Int32> = []
        var suspects: Set<Int32> = []
        var overflowed = false
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer.baseAddress, capacity)
            guard count > 0 else { break }
            var offset = 0
            // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[]; }
            let header = 16
            while offset + header <= count {
                let watch = buffer.load(fromByteOffset: offset, as: Int32.self)
                let events = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                // The kernel's queue was full and events were lost: every monitor may have missed one.
                if events & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true }
                let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = offset + header
                let nameEnd = min(nameStart + length, count)
                if events & Self.directoryGone != 0 { gone.insert(watch) }
                if events & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { suspects.insert(watch) }
                if length > 0, nameStart < nameEnd {
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<nameEnd])
                    touched[watch, default: [:]][String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self), default: 0] |= events
                }
                offset = nameEnd
            }
        }
        if !suspects.isEmpty {
            let suspects = suspects
            for delay in Self.checkDelays {
                queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.checkDirectories(suspects) }
            }
        }
        guard !touched.isEmpty || overflowed || !gone.isEmpty else { return false }
        let notify: [Int: Watcher] = state.withLock { state in
            var result = Self.orphan(gone, in: &state)
            scheduleRewatch(&state)
            if overflowed {
                for watchers in state.watchers.values { result.merge(watchers) { first, _ in first } }
            }
            for (watch, names) in touched {
                for (id, watcher) in state.watchers[watch] ?? [:]
                where names.contains(where: { watcher.names.contains($0.key) && $0.value & watcher.mask != 0 }) {
                    result[id] = watcher
                }
            }
            return result
        }
        for watcher in notify.values {
            watcher.queue.async(execute: watcher.onChange)
        }
        return !notify.isEmpty
    }
}
#endif
