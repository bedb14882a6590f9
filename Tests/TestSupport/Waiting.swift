import Foundation

extension Duration {
    /// How long a test waits for something that should happen soon (an event, a task, another
    /// process): long enough for a loaded machine running the whole suite on two cores, where a
    /// task can wait seconds for a thread. Waits end as soon as the condition holds, so passing
    /// tests never pay for it.
    public static let patience: Duration = .seconds(30)
}

/// Polls `condition`, blocking this thread, until it holds or `timeout` passes; returns whether it
/// held.
///
/// ```swift
/// #expect(waitUntil { events.all.count == 2 })
/// ```
@discardableResult
public func waitUntil(within timeout: Duration = .patience, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(1_000)
    }
    return try condition()
}

/// Checks `condition`, awaiting between checks on the caller's actor (so that what is delivered
/// there, the main queue included, keeps running), until it holds or `timeout` passes; returns
/// whether it held.
///
/// ```swift
/// #expect(await eventually { seen.all.count == 1 })
/// ```
public func eventually(
    within timeout: Duration = .patience, isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
