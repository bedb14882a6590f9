import Foundation

/// The storage the conformance suite gives a provider for one group of checks.
///
/// Each group gets a fresh one; the suite may open several providers on it, one after another or
/// at the same time, to check persistence and sharing.
public struct ConformanceStorage: Sendable {
    /// A fresh, empty directory, removed when the group ends. File-based providers keep their
    /// files in it.
    public let directory: URL
    /// A name unique to this group's storage, for providers that are not file-based (a suite
    /// name, a table prefix, a database name).
    public let identifier: String

    public init(directory: URL, identifier: String) {
        self.directory = directory
        self.identifier = identifier
    }
}
