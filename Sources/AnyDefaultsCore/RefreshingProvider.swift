/// A provider that answers reads from a copy in memory (a file's contents, a suite, a server's
/// replica) and can bring that copy up to date on request.
///
/// ``refresh()`` reads the storage again now, rather than when a file watcher, a timer or a
/// notification would, and reports what other processes or machines changed as `.external`
/// events; ``DefaultsProvider/synchronize()`` is `refresh()`.
///
/// ```swift
/// let store = try JSONFileProvider(path: "/tmp/settings.json")
/// try store.refresh()   // another process just wrote the file
/// ```
public protocol RefreshingProvider: DefaultsProvider {
    /// Reads the storage again, so that the next read sees every change committed before this
    /// call, and reports those changes to observers.
    func refresh() throws(DefaultsError)
}

extension RefreshingProvider {
    public func synchronize() throws(DefaultsError) {
        try refresh()
    }
}
