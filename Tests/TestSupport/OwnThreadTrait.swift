import Foundation
import Testing

/// Runs each test of a suite on threads of its own instead of Swift concurrency's cooperative
/// threads, for tests that block: that wait for child processes, poll files, sleep.
///
/// There are only as many cooperative threads as cores (two on the CI machine), and they never
/// grow when one blocks: two tests polling a child process for a minute would keep every task of
/// every other test (a stream's first value, an event delivered by a `Task`) from running for that
/// minute, so that tests waiting for such work time out. At most ``limit`` such tests run at once.
///
/// ```swift
/// @Suite(.ownThreads) struct ChildProcessTests { … }
/// ```
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    /// How many tests run on their own threads at once: two per core.
    public static let limit = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Each test case once (the suite's and the test's own scopes pass through).
        guard testCase != nil else { return try await function() }
        try await ThreadPerJobExecutor.run(holding: Self.slots) { try await function() }
    }

    private static let slots = AsyncSlots(limit)
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test on threads of its own, not on Swift concurrency's cooperative threads
    /// (see ``OwnThreadTrait``).
    public static var ownThreads: Self { OwnThreadTrait() }
}

/// Runs every job on a new thread: a test's code between two suspensions, which may block. The one
/// way the tests keep blocking work off the cooperative threads (``OwnThreadTrait``, ``BlockingWork``).
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    /// Runs `body` with this executor preferred, once one of `slots` is free, and frees it after.
    static func run<T: Sendable>(holding slots: AsyncSlots, _ body: () async throws -> T) async throws -> T {
        await slots.acquire()
        do {
            let result = try await withTaskExecutorPreference(shared) { try await body() }
            await slots.release()
            return result
        } catch {
            await slots.release()
            throw error
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}

/// A counting semaphore for tasks: waiting suspends the task instead of blocking its thread.
actor AsyncSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}
