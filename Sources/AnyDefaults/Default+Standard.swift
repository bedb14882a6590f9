import AnyDefaultsCore

// The property wrappers and settings models on the process-wide store, `Defaults.standard`.
// The store is taken when the property (or model) is created: set `Defaults.standard` first.

extension Default {
    /// A property stored under `name` in `Defaults.standard`, with the initial value as its
    /// default.
    ///
    /// ```swift
    /// @Default("volume") var volume = 0.5
    /// ```
    public init(wrappedValue defaultValue: Value, _ name: some DefaultsKeyName) {
        self.init(wrappedValue: defaultValue, name, store: .standard)
    }

    /// An optional property stored under `name` in `Defaults.standard`, `nil` while nothing is
    /// stored.
    public init(_ name: some DefaultsKeyName) where Value: ExpressibleByNilLiteral {
        self.init(name, store: .standard)
    }

    /// A property for a typed key in `Defaults.standard`.
    ///
    /// ```swift
    /// @Default(.volume) var volume
    /// ```
    public init(_ key: DefaultsKey<Value>) {
        self.init(key, store: .standard)
    }
}

extension DefaultsModel {
    /// A model whose settings live in `Defaults.standard` under `prefix`.
    ///
    /// ```swift
    /// let settings = PlayerSettings(prefix: "player.")
    /// ```
    public convenience init(prefix: String = "") {
        self.init(store: .standard, prefix: prefix)
    }
}
