extension Duration {
    /// The duration in whole nanoseconds, clamped to `0...UInt64.max`: what a timeout, a sleep or
    /// a dispatch deadline takes. The one conversion of the package (seconds and the fraction).
    package var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (scaled, overflowed) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carried) = scaled.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflowed || carried ? .max : total
    }

    /// ``clampedNanoseconds`` as an `Int` (for `DispatchTimeInterval.nanoseconds`), clamped to `Int.max`.
    package var clampedNanosecondsInt: Int { Int(clamping: clampedNanoseconds) }

    /// The duration in seconds, as a `Double` (for messages and reports).
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
