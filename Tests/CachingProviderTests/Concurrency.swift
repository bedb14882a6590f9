import Dispatch
import Foundation

/// Runs `body` on `count` threads of their own and waits for all of them. Real threads, not a
/// pool sized to the cores, so that a machine with few cores still interleaves them; they start
/// `body` together, once all of them exist.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        Thread {
            start.wait()
            body(index)
            group.leave()
        }.start()
    }
    for _ in 0..<count { start.signal() }
    group.wait()
}

/// Starts `body` on a thread of its own; `wait()` on the result joins it.
func startThread(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
    return group
}

/// A one-way signal between two threads, with a timeout so that a broken test fails instead of
/// hanging.
struct Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func fire() { semaphore.signal() }

    /// Whether the signal came within `seconds`.
    @discardableResult
    func wait(seconds: Double = 30) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }
}
