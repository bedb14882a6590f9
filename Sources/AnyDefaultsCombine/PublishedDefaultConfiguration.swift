import Synchronization

/// Settings for every ``PublishedDefault`` property of the process.
public enum PublishedDefaultConfiguration {
    private static let mocksEveryProperty = Atomic(false)

    /// Whether every property is mocked: kept in memory, starting from its default, and never
    /// reading or writing its store (nor opening `Defaults.standard`). For tests and previews.
    ///
    /// ```swift
    /// PublishedDefaultConfiguration.mock = true
    /// let settings = Settings()               // its properties never touch a store
    /// ```
    ///
    /// A property decides at its first use (first read, write or subscription) whether it is
    /// mocked: set this before then. A property's own flag is `_volume.mock`.
    public static var mock: Bool {
        get { mocksEveryProperty.load(ordering: .relaxed) }
        set { mocksEveryProperty.store(newValue, ordering: .relaxed) }
    }
}
