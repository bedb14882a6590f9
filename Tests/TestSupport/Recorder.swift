import Foundation
import Synchronization

/// Collects what callbacks on other threads report (change events, for example) and waits for it.
///
/// ```swift
/// let events = Recorder<DefaultsChangeEvent>()
/// let observation = store.observe { events.record($0) }
/// #expect(events.wait(for: 2) == [first, second])
/// ```
public final class Recorder<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    public init() {}

    public func record(_ element: Element) { elements.withLock { $0.append(element) } }

    /// Everything recorded so far.
    public var all: [Element] { elements.withLock { $0 } }

    /// Everything recorded once there are at least `count` elements, or when `timeout` has passed.
    public func wait(for count: Int, timeout: Duration = .patience) -> [Element] {
        waitUntil(within: timeout) { all.count >= count }
        return all
    }

    /// Everything recorded after waiting `settle` for late arrivals, having first waited (up to
    /// `timeout`) for at least `count` elements; for checking that nothing more than expected comes.
    public func settled(at count: Int, settle: Duration = .milliseconds(150), timeout: Duration = .patience) -> [Element] {
        _ = wait(for: count, timeout: timeout)
        Thread.sleep(forTimeInterval: Double(settle.components.seconds) + Double(settle.components.attoseconds) * 1e-18)
        return all
    }
}
