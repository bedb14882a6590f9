import Foundation

/// Runs blocking work — a conformance group that waits seconds for events, watchers and child
/// processes — on a thread of its own, so that it does not hold one of Swift concurrency's
/// cooperative threads: there are only as many as cores, and a waiting group would keep every other
/// test (of any target) from running meanwhile. At most ``limit`` run at once, so that CPU-bound
/// groups do not crowd out the timing of others.
///
/// ```swift
/// @Test func roundTrips() async throws {
///     let report = try await BlockingWork.run { try suite.report(.roundTrips) }
/// }
/// ```
public enum BlockingWork {
    /// How many pieces of work run at once: four per core, at least 8 (most of a group's time is
    /// spent waiting for events, watchers and child processes). A pool apart from
    /// ``OwnThreadTrait``'s, so that a test of an `.ownThreads` suite that runs blocking work never
    /// waits for a slot its own kind holds.
    public static let limit = max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)
    private static let slots = AsyncSlots(limit)

    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await ThreadPerJobExecutor.run(holding: slots) { try body() }
    }
}
