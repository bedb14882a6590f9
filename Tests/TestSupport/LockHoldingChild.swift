import Foundation

import AnyDefaultsPlatform

/// A child process holding a store's write lock, asleep (`TestChild hold-lock <store> 600`), until
/// ``end()``, which kills it and reaps it (a zombie child makes Swift Testing's exit-test monitor
/// spin and the exit tests wait forever). Ended when released, too.
///
/// ```swift
/// let holder = try LockHoldingChild(store: "sqlite:" + path)
/// #expect(holder.isHolding)
/// holder.end()
/// ```
public final class LockHoldingChild {
    public let process: Process
    /// Whether the child said it holds the lock.
    public let isHolding: Bool

    public init(store: String) throws {
        let (process, output, _) = try ChildProcess.start("TestChild", ["hold-lock", store, "600"])
        self.process = process
        isHolding = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) == "locked\n"
    }

    /// Kills the child and waits for its exit; ending it again does nothing.
    public func end() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { end() }
}
