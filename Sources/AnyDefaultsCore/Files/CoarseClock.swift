import AnyDefaultsPlatform

/// A monotonic clock read in a few nanoseconds, at the resolution of the system's tick
/// (milliseconds), for deciding when a periodic check is due on a hot path.
///
/// ```swift
/// if CoarseClock.nanoseconds &- checkedAt >= 50_000_000 { checkedAt = CoarseClock.nanoseconds; check() }
/// ```
package enum CoarseClock {
    /// Nanoseconds since an arbitrary start, advancing in ticks.
    package static var nanoseconds: UInt64 {
        #if canImport(Darwin)
        return clock_gettime_nsec_np(CLOCK_UPTIME_RAW_APPROX)
        #else
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
        #endif
    }
}
