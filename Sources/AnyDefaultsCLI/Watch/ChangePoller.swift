import AnyDefaults

/// Changes of a persistent store whose backend does not report other processes' changes
/// (no ``DefaultsCapabilities/externalChanges``): found by reading the whole store at an
/// interval and comparing it with the last read.
struct ChangePoller {
    let provider: any DefaultsProvider
    var interval: Duration = .milliseconds(250)

    /// The changes from now on, one event per key whose value differs between two reads, keys in
    /// UTF-8 order within one read. Ends with the error if a read fails.
    func changes() -> AsyncThrowingStream<DefaultsChangeEvent, any Error> {
        let provider = provider
        let interval = interval
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var last = try provider.allValues()
                    while !Task.isCancelled {
                        try await Task.sleep(for: interval)
                        // A backend that keeps a copy in memory (json:?watch=off) reads its storage
                        // again only when asked to.
                        try provider.synchronize()
                        let now = try provider.allValues()
                        for event in DefaultsChangeEvent.differences(from: last, to: now) { continuation.yield(event) }
                        last = now
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
