import AnyDefaultsCore
import Foundation

extension Defaults {
    /// Opens the store a store string names, with the backends of ``ProviderRegistry/standard``:
    /// the backend is a deployment choice, not a code change (see Docs/Configuration.md).
    ///
    /// ```swift
    /// let defaults = try Defaults(url: "sqlite:~/.local/share/myapp/settings.sqlite")
    /// let scratch = try Defaults(url: "memory:?cache=off")
    /// ```
    ///
    /// The store is cached unless the string says `cache=off`. The other parameters are those of
    /// ``Defaults/init(_:cached:errorHandler:decodingFailurePolicy:tracksReadsByName:)``.
    ///
    /// - Throws: ``DefaultsError`` with code `invalidConfiguration` for a string that does not
    ///   parse or names no registered backend, or the backend's error when it cannot open the store.
    public convenience init(
        url store: String, registry: ProviderRegistry = .standard, errorHandler: @escaping ErrorHandler = Defaults.logErrors,
        decodingFailurePolicy: DecodingFailurePolicy = .keepValue, tracksReadsByName: Bool = false
    ) throws(DefaultsError) {
        try self.init(
            configuration: StoreConfiguration(parsing: store), registry: registry, errorHandler: errorHandler,
            decodingFailurePolicy: decodingFailurePolicy, tracksReadsByName: tracksReadsByName)
    }

    /// Opens the store a store URL names, such as `sqlite:///var/lib/myapp/settings.sqlite`
    /// (its text is read as a store string: `SCHEME:///abs/path` is `SCHEME:/abs/path`).
    public convenience init(
        url: URL, registry: ProviderRegistry = .standard, errorHandler: @escaping ErrorHandler = Defaults.logErrors,
        decodingFailurePolicy: DecodingFailurePolicy = .keepValue, tracksReadsByName: Bool = false
    ) throws(DefaultsError) {
        try self.init(
            url: url.absoluteString, registry: registry, errorHandler: errorHandler, decodingFailurePolicy: decodingFailurePolicy,
            tracksReadsByName: tracksReadsByName)
    }

    /// Opens the store `configuration` describes, cached as its `cache` says.
    public convenience init(
        configuration: StoreConfiguration, registry: ProviderRegistry = .standard, errorHandler: @escaping ErrorHandler = Defaults.logErrors,
        decodingFailurePolicy: DecodingFailurePolicy = .keepValue, tracksReadsByName: Bool = false
    ) throws(DefaultsError) {
        // The registry already put a cache in front when the configuration asks for one; with
        // `cache=off` the facade must not add one either.
        self.init(
            try registry.makeProvider(configuration), cached: configuration.cache, errorHandler: errorHandler,
            decodingFailurePolicy: decodingFailurePolicy, tracksReadsByName: tracksReadsByName)
    }
}
