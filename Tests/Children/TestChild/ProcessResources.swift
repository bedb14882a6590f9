#if os(Linux)
import Foundation

/// What this process holds that a store could leak: open file descriptors, threads, and inotify
/// watches (which are not file descriptors: they sit in the one inotify instance, listed in its
/// `fdinfo`). Linux only: it reads `/proc/self`.
struct ProcessResources: Equatable, CustomStringConvertible {
    var fileDescriptors: Int
    var threads: Int
    var inotifyWatches: Int

    static var current: ProcessResources {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let watches = descriptors.reduce(0) { total, descriptor in
            let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)) ?? ""
            return total + info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
        }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
        return ProcessResources(fileDescriptors: descriptors.count, threads: threads, inotifyWatches: watches)
    }

    /// The resources once they are down to `target`'s (threads to at most `extraThreads` more),
    /// or after `timeout`. A store released while a callback of its watch runs goes away when the
    /// callback returns, and Dispatch lets idle worker threads go after about five seconds.
    static func settled(at target: ProcessResources, extraThreads: Int, timeout: Duration) -> ProcessResources {
        let deadline = ContinuousClock.now + timeout
        var now = current
        while now.fileDescriptors > target.fileDescriptors || now.inotifyWatches > target.inotifyWatches
            || now.threads > target.threads + extraThreads, ContinuousClock.now < deadline
        {
            usleep(20_000)
            now = current
        }
        return now
    }

    /// One line for the parent to parse: `<fds> <threads> <watches>`.
    var description: String { "\(fileDescriptors) \(threads) \(inotifyWatches)" }
}
#endif
